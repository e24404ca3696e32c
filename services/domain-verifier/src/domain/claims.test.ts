import { describe, expect, it } from '@jest/globals';
import { claimProven, claimRecordValue, sameSettings, type ClaimSettings } from './claims.ts';

describe('domain claims', () => {
  const value = claimRecordValue('ab12');

  it('are proven by a TXT record with exactly the value, its chunks joined', () => {
    expect(value).toBe('postline-domain-verification=ab12');
    expect(claimProven({ ok: true, answers: [['v=spf1 -all'], [value]] }, value)).toBe(true);
    expect(claimProven({ ok: true, answers: [['postline-domain-', 'verification=ab12']] }, value)).toBe(true);
    expect(claimProven({ ok: true, answers: [[`${value}x`], ['postline-domain-verification=ab1']] }, value)).toBe(
      false,
    );
    expect(claimProven({ ok: false, reason: 'missing', detail: 'NXDOMAIN' }, value)).toBe(false);
    expect(claimProven({ ok: false, reason: 'temporary', detail: 'timeout' }, value)).toBe(false);
  });

  it('with the same settings are the same claim', () => {
    const settings: ClaimSettings = {
      region: 'us-east-1',
      custom_return_path: 'send',
      open_tracking: false,
      click_tracking: false,
      tracking_subdomain: null,
    };
    expect(sameSettings(settings, { ...settings })).toBe(true);
    expect(sameSettings(settings, { ...settings, region: 'eu-west-1' })).toBe(false);
    expect(sameSettings(settings, { ...settings, tracking_subdomain: 'links' })).toBe(false);
    expect(sameSettings(settings, { ...settings, open_tracking: true })).toBe(false);
  });
});
