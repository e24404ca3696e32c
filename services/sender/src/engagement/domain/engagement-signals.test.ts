import { describe, expect, it } from '@jest/globals';
import { inRanges, machineRule, SIGNAL_RULES, type Engagement } from './engagement-signals.ts';

const delivered = new Date('2026-12-02T10:00:00Z');
const later = (ms: number) => new Date(delivered.getTime() + ms);
const CHROME =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const THUNDERBIRD = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0';

/** A reader's open or click: a residential address, a browser, a minute after delivery. */
function reader(kind: Engagement['kind'], overrides: Partial<Engagement> = {}): Engagement {
  return {
    kind,
    method: 'GET',
    ip: '81.2.69.142',
    userAgent: kind === 'open' ? THUNDERBIRD : CHROME,
    at: later(60_000),
    deliveredAt: delivered,
    ...overrides,
  };
}

const ruleOf = (engagement: Engagement) => machineRule(engagement)?.name;

describe('engagement signals', () => {
  it("leave a reader's open and click unflagged", () => {
    expect(ruleOf(reader('open'))).toBeUndefined();
    expect(ruleOf(reader('click'))).toBeUndefined();
    expect(ruleOf(reader('open', { deliveredAt: null }))).toBeUndefined();
  });

  it('every rule carries evidence with a source', () => {
    for (const rule of SIGNAL_RULES) expect(rule.evidence).toMatch(/\w+\.(com|net|online)/);
    expect(new Set(SIGNAL_RULES.map((rule) => rule.name)).size).toBe(SIGNAL_RULES.length);
  });

  describe('machine_open', () => {
    it('apple-mpp: an open from Apple egress (17.0.0.0/8), at any time, with any agent', () => {
      expect(ruleOf(reader('open', { ip: '17.58.101.4' }))).toBe('apple-mpp');
      expect(ruleOf(reader('open', { ip: '::ffff:17.1.2.3', at: later(86_400_000) }))).toBe('apple-mpp');
      expect(ruleOf(reader('open', { ip: '18.0.0.1' }))).toBeUndefined();
    });

    it('apple-mpp-user-agent: a bare Mozilla/5.0 with no platform tokens', () => {
      expect(ruleOf(reader('open', { userAgent: 'Mozilla/5.0' }))).toBe('apple-mpp-user-agent');
      expect(
        ruleOf(reader('open', { userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)' })),
      ).toBeUndefined();
    });

    it('gmail-image-proxy: GoogleImageProxy, via ggpht / googleusercontent', () => {
      const gmail = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
      expect(ruleOf(reader('open', { userAgent: gmail }))).toBe('gmail-image-proxy');
      expect(ruleOf(reader('open', { userAgent: 'Mozilla/5.0 (via googleusercontent.com)' }))).toBe(
        'gmail-image-proxy',
      );
    });

    it('yahoo-mail-proxy: YahooMailProxy', () => {
      const yahoo = 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html';
      expect(ruleOf(reader('open', { userAgent: yahoo }))).toBe('yahoo-mail-proxy');
    });

    it('data-centre-prefetch: within seconds of delivery from a data-centre address, not later, not elsewhere', () => {
      expect(ruleOf(reader('open', { ip: '52.96.1.1', at: later(2_000) }))).toBe('data-centre-prefetch');
      expect(ruleOf(reader('open', { ip: '52.96.1.1', at: later(120_000) }))).toBeUndefined();
      expect(ruleOf(reader('open', { ip: '81.2.69.142', at: later(2_000) }))).toBeUndefined();
      expect(ruleOf(reader('open', { ip: '52.96.1.1', at: later(2_000), deliveredAt: null }))).toBeUndefined();
    });

    it('open rules never flag a click', () => {
      expect(ruleOf(reader('click', { ip: '17.58.101.4', userAgent: 'GoogleImageProxy' }))).toBeUndefined();
    });
  });

  describe('scanner_click', () => {
    it('head-request: HEAD at any time', () => {
      expect(ruleOf(reader('click', { method: 'HEAD', at: later(3_600_000) }))).toBe('head-request');
    });

    it('scanner-user-agent: Safe Links, Proofpoint, Mimecast, Barracuda and other named scanners', () => {
      for (const agent of [
        'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.5) SafeLinks',
        'Proofpoint URL Defense',
        'Mimecast URL Protect',
        'Barracuda LinkProtect (cudasvc)',
        'curl/8.5.0',
      ]) {
        expect(ruleOf(reader('click', { userAgent: agent }))).toBe('scanner-user-agent');
      }
    });

    it('click-right-after-delivery: within 5 s of delivery, not after', () => {
      expect(ruleOf(reader('click', { at: later(1_500) }))).toBe('click-right-after-delivery');
      expect(ruleOf(reader('click', { at: later(6_000) }))).toBeUndefined();
      expect(ruleOf(reader('click', { at: later(1_500), deliveredAt: null }))).toBeUndefined();
    });

    it('click rules never flag an open', () => {
      expect(ruleOf(reader('open', { at: later(1_000), userAgent: `${CHROME} SafeLinks` }))).toBeUndefined();
    });

    it('head-pixel: a HEAD on the pixel is a machine open', () => {
      expect(ruleOf(reader('open', { method: 'HEAD', at: later(3_600_000) }))).toBe('head-pixel');
    });
  });

  it('inRanges reads IPv4 CIDRs and refuses what is not an address', () => {
    expect(inRanges('10.1.2.3', ['10.0.0.0/8'])).toBe(true);
    expect(inRanges('11.1.2.3', ['10.0.0.0/8'])).toBe(false);
    expect(inRanges('1.2.3.4', ['0.0.0.0/0'])).toBe(true);
    expect(inRanges('2001:db8::1', ['0.0.0.0/0'])).toBe(false);
    expect(inRanges('256.1.1.1', ['0.0.0.0/0'])).toBe(false);
  });
});
