import { describe, expect, it } from '@jest/globals';
import { checkDomainName, relativeTo } from './names.ts';
import { recordsFor, type RecordSpec } from './records.ts';
import {
  caaSearchEnds,
  caaSearchNames,
  checkCaa,
  checkCname,
  checkMx,
  checkTxt,
  domainStatus,
  nextCheckDelay,
  purposeVerified,
  recordStatus,
  RECHECK_INTERVAL_S,
  VERIFICATION_WINDOW_S,
  type CaaAnswer,
  type CaaStep,
} from './verification.ts';

const infra = {
  inboundMxHost: 'inbound.postline.test',
  spfInclude: '_spf.postline.test',
  trackingHost: 'track.postline.test',
};
const KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'.padEnd(392, 'A');

function specs(overrides: Partial<Parameters<typeof recordsFor>[0]> = {}): RecordSpec[] {
  return recordsFor(
    {
      name: 'example.com',
      zone: 'example.com',
      dkimSelector: 'postline-abc',
      dkimPublicKey: KEY,
      returnPath: 'send',
      sending: true,
      receiving: false,
      trackingSubdomain: null,
      ...overrides,
    },
    infra,
  );
}
const spec = (kind: RecordSpec['kind'], all = specs({ receiving: true })) => all.find((s) => s.kind === kind)!;

describe('domain names', () => {
  it.each([
    ['example.com', 'example.com', 'example.com'],
    ['Mail.Example.COM.', 'mail.example.com', 'example.com'],
    ['updates.example.co.uk', 'updates.example.co.uk', 'example.co.uk'],
    ['bücher.example', 'xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['me.github.io', 'me.github.io', 'me.github.io'],
  ])('accepts %s as %s in zone %s', (input, name, zone) => {
    expect(checkDomainName(input)).toEqual({ ok: true, domain: { name, zone } });
  });

  it.each([
    ['', 'empty'],
    ['localhost', 'single label'],
    ['com', 'TLD'],
    ['co.uk', 'ICANN public suffix'],
    ['github.io', 'private public suffix'],
    ['192.168.1.10', 'IPv4'],
    ['[::1]', 'IPv6'],
    ['1.2.3.4.5', 'numeric'],
    ['https://example.com', 'URL'],
    ['user@example.com', 'address'],
    ['exa_mple.com', 'underscore'],
    ['-bad.example.com', 'leading hyphen'],
    [`${'a'.repeat(64)}.com`, 'label over 63'],
    ['exa mple.com', 'space'],
    ['example.com\u0000', 'NUL'],
    ['resend.dev', 'the test addresses’ domain'],
    ['mail.postline.test', 'under the test addresses’ domain'],
  ])('refuses %j (%s) with a message naming the field', (input) => {
    const result = checkDomainName(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(/^The `name` field must be a valid domain name/);
  });

  it('names records relative to the zone the customer edits', () => {
    expect(relativeTo('send.mail.example.com', 'example.com')).toBe('send.mail');
    expect(relativeTo('example.com', 'example.com')).toBe('');
  });
});

describe('records', () => {
  it('lists DKIM, the return-path MX and SPF for sending, and the receiving MX when enabled', () => {
    expect(specs({ receiving: true }).map((s) => [s.record, s.type, s.name, s.value, s.priority])).toEqual([
      ['DKIM', 'TXT', 'postline-abc._domainkey', `p=${KEY}`, undefined],
      ['SPF', 'MX', 'send', 'inbound.postline.test', 10],
      ['SPF', 'TXT', 'send', 'v=spf1 include:_spf.postline.test ~all', undefined],
      ['Receiving', 'MX', 'example.com', 'inbound.postline.test', 10],
    ]);
    expect(specs().map((s) => s.kind)).toEqual(['dkim', 'spf_mx', 'spf_txt']);
    expect(specs({ sending: false, receiving: true }).map((s) => s.kind)).toEqual(['receiving_mx']);
  });

  it('looks up full names for a subdomain and a custom return path', () => {
    const sub = specs({ name: 'mail.example.com', returnPath: 'bounce' });
    expect(sub.map((s) => [s.name, s.fqdn])).toEqual([
      ['postline-abc._domainkey.mail', 'postline-abc._domainkey.mail.example.com'],
      ['bounce.mail', 'bounce.mail.example.com'],
      ['bounce.mail', 'bounce.mail.example.com'],
    ]);
  });
});

describe('checks', () => {
  const dkim = spec('dkim');
  const spf = spec('spf_txt');

  it('joins the character-strings of one DKIM record before comparing', () => {
    const value = `p=${KEY}`;
    expect(checkTxt(dkim, { ok: true, answers: [[value.slice(0, 255), value.slice(255)]] })).toEqual({
      outcome: 'verified',
    });
    expect(checkTxt(dkim, { ok: true, answers: [['v=DKIM1; k=rsa; ', value]] })).toEqual({ outcome: 'verified' });
  });

  it('does not join different records, and refuses a truncated or foreign key', () => {
    const value = `p=${KEY}`;
    expect(checkTxt(dkim, { ok: true, answers: [[value.slice(0, 255)], [value.slice(255)]] }).outcome).toBe('mismatch');
    expect(checkTxt(dkim, { ok: true, answers: [[value.slice(0, -1)]] }).outcome).toBe('mismatch');
    expect(checkTxt(dkim, { ok: true, answers: [[`v=DKIM1; k=ed25519; ${value}`]] }).outcome).toBe('mismatch');
    expect(checkTxt(dkim, { ok: true, answers: [] }).outcome).toBe('missing');
  });

  it('accepts our SPF value or a record including our SPF domain, and fails two SPF records', () => {
    expect(checkTxt(spf, { ok: true, answers: [['v=spf1 include:_spf.postline.test ~all'], ['other']] })).toEqual({
      outcome: 'verified',
    });
    expect(checkTxt(spf, { ok: true, answers: [['v=spf1 ip4:192.0.2.1 include:_SPF.postline.test -all']] })).toEqual({
      outcome: 'verified',
    });
    expect(checkTxt(spf, { ok: true, answers: [['v=spf1 include:other.test ~all']] }).outcome).toBe('mismatch');
    expect(
      checkTxt(spf, { ok: true, answers: [['v=spf1 include:_spf.postline.test ~all'], ['v=spf1 -all']] }).outcome,
    ).toBe('invalid');
  });

  it('finds our MX host among the exchanges, without case or trailing dot', () => {
    const mx = spec('spf_mx');
    expect(
      checkMx(mx, {
        ok: true,
        answers: [
          { exchange: 'other.test', priority: 5 },
          { exchange: 'Inbound.Postline.Test.', priority: 20 },
        ],
      }),
    ).toEqual({ outcome: 'verified' });
    expect(checkMx(mx, { ok: true, answers: [{ exchange: 'other.test', priority: 5 }] }).outcome).toBe('mismatch');
    expect(checkMx(mx, { ok: false, reason: 'temporary', detail: 'ETIMEOUT' }).outcome).toBe('temporary');
  });

  it('keeps a missing record pending inside the window and fails it after; a timeout is temporary', () => {
    expect(recordStatus({ outcome: 'missing', detail: '' }, false)).toBe('pending');
    expect(recordStatus({ outcome: 'missing', detail: '' }, true)).toBe('failed');
    expect(recordStatus({ outcome: 'temporary', detail: '' }, true)).toBe('temporary_failure');
    expect(recordStatus({ outcome: 'invalid', detail: '' }, false)).toBe('failed');
  });
});

describe('domain status', () => {
  const sending = (status: 'verified' | 'pending' | 'failed' | 'temporary_failure') =>
    ['dkim', 'spf_mx', 'spf_txt'].map(() => ({ purpose: 'sending' as const, status }));
  const receiving = (status: 'verified' | 'pending' | 'failed' | 'temporary_failure') => [
    { purpose: 'receiving' as const, status },
  ];

  it('is verified when every enabled capability is', () => {
    expect(domainStatus(sending('verified'), ['sending'], false)).toBe('verified');
    expect(domainStatus([...sending('verified'), ...receiving('verified')], ['sending', 'receiving'], true)).toBe(
      'verified',
    );
  });

  it('is partially verified, then partially failed, when one capability is verified and the other is not', () => {
    expect(domainStatus([...sending('verified'), ...receiving('pending')], ['sending', 'receiving'], false)).toBe(
      'partially_verified',
    );
    expect(domainStatus([...sending('verified'), ...receiving('failed')], ['sending', 'receiving'], true)).toBe(
      'partially_failed',
    );
  });

  it('is pending in the window, failed after it, and never failed because of a DNS outage', () => {
    expect(domainStatus(sending('pending'), ['sending'], false)).toBe('pending');
    expect(domainStatus(sending('failed'), ['sending'], true)).toBe('failed');
    expect(domainStatus(sending('temporary_failure'), ['sending'], true)).toBe('temporary_failure');
    const oneVerified = [{ purpose: 'sending' as const, status: 'verified' as const }, ...sending('pending').slice(1)];
    expect(domainStatus(oneVerified, ['sending'], false)).toBe('pending');
  });
});

describe('check schedule', () => {
  const scale = 1;
  const window = VERIFICATION_WINDOW_S;
  it('checks first after a minute, backs off to hourly, and never later than the window end', () => {
    const delays = [0, 1, 2, 3, 4, 5, 6, 7, 20].map((checks) =>
      nextCheckDelay({ status: 'pending', checks, windowRemainingS: window, scale }),
    );
    expect(delays).toEqual([60, 60, 120, 300, 600, 900, 1800, 3600, 3600]);
    expect(nextCheckDelay({ status: 'pending', checks: 9, windowRemainingS: 10, scale })).toBeCloseTo(10.001);
  });

  it('re-checks verified domains periodically, stops on failed, and scales every wait', () => {
    expect(nextCheckDelay({ status: 'verified', checks: 3, windowRemainingS: 0, scale })).toBe(RECHECK_INTERVAL_S);
    expect(nextCheckDelay({ status: 'failed', checks: 3, windowRemainingS: 0, scale })).toBeUndefined();
    expect(
      nextCheckDelay({ status: 'pending', checks: 0, windowRemainingS: window * 0.001, scale: 0.001 }),
    ).toBeCloseTo(0.06);
  });
});

describe('tracking records', () => {
  const tracked = specs({ name: 'mail.example.com', trackingSubdomain: 'links' });
  const cname = tracked.find((s) => s.kind === 'tracking_cname')!;
  const caa = tracked.find((s) => s.kind === 'tracking_caa')!;

  it('adds the tracking CNAME to TRACKING_HOST and the CAA record at the zone apex, only with a tracking subdomain', () => {
    expect(tracked.map((s) => s.kind)).toEqual(['dkim', 'spf_mx', 'spf_txt', 'tracking_cname', 'tracking_caa']);
    expect([cname.record, cname.type, cname.name, cname.fqdn, cname.value, cname.purpose]).toEqual([
      'Tracking',
      'CNAME',
      'links.mail',
      'links.mail.example.com',
      'track.postline.test',
      'tracking',
    ]);
    expect([caa.record, caa.type, caa.name, caa.fqdn, caa.value]).toEqual([
      'TrackingCAA',
      'CAA',
      'example.com',
      'links.mail.example.com',
      '0 issue "letsencrypt.org"',
    ]);
    expect(specs().some((s) => s.purpose === 'tracking')).toBe(false);
    expect(specs({ sending: false, receiving: true, trackingSubdomain: 'links' }).map((s) => s.kind)).toEqual([
      'receiving_mx',
      'tracking_cname',
      'tracking_caa',
    ]);
  });

  it('verifies the CNAME when it points at TRACKING_HOST, without case or trailing dot', () => {
    expect(checkCname(cname, { ok: true, answers: ['Track.Postline.Test.'] })).toEqual({ outcome: 'verified' });
    expect(checkCname(cname, { ok: true, answers: ['elsewhere.test'] }).outcome).toBe('mismatch');
    expect(checkCname(cname, { ok: false, reason: 'missing', detail: 'NXDOMAIN' }).outcome).toBe('missing');
    expect(checkCname(cname, { ok: false, reason: 'temporary', detail: 'ETIMEOUT' }).outcome).toBe('temporary');
  });

  it('searches CAA from the tracking host up to the top-level domain, stopping at the first set or a DNS failure', () => {
    expect(caaSearchNames('links.mail.example.com.')).toEqual([
      'links.mail.example.com',
      'mail.example.com',
      'example.com',
      'com',
    ]);
    expect(caaSearchEnds({ name: 'a', lookup: { ok: false, reason: 'missing', detail: 'NXDOMAIN' } })).toBe(false);
    expect(caaSearchEnds({ name: 'a', lookup: { ok: true, answers: [] } })).toBe(false);
    expect(
      caaSearchEnds({
        name: 'a',
        lookup: { ok: true, answers: [{ critical: false, tag: 'iodef', value: 'mailto:x@y' }] },
      }),
    ).toBe(true);
    expect(caaSearchEnds({ name: 'a', lookup: { ok: false, reason: 'temporary', detail: 'SERVFAIL' } })).toBe(true);
  });

  const none = (name: string): CaaStep => ({ name, lookup: { ok: false, reason: 'missing', detail: 'NXDOMAIN' } });
  const set = (name: string, ...answers: CaaAnswer[]): CaaStep => ({ name, lookup: { ok: true, answers } });
  const issue = (value: string, critical = false): CaaAnswer => ({ critical, tag: 'issue', value });

  it('is verified when no CAA record restricts issuance on the host or any parent (RFC 8659)', () => {
    expect(checkCaa(caa, caaSearchNames(caa.fqdn).map(none))).toEqual({ outcome: 'verified' });
    expect(
      checkCaa(caa, [
        none('links.mail.example.com'),
        set('mail.example.com', { critical: false, tag: 'iodef', value: 'mailto:pki@example.com' }),
      ]),
    ).toEqual({
      outcome: 'verified',
    });
    expect(checkCaa(caa, [set('links.mail.example.com', { critical: false, tag: 'issuewild', value: ';' })])).toEqual({
      outcome: 'verified',
    });
  });

  it('needs our CA in the relevant (nearest) set', () => {
    expect(
      checkCaa(caa, [
        none('links.mail.example.com'),
        none('mail.example.com'),
        set('example.com', issue('digicert.com'), issue('LetsEncrypt.org')),
      ]),
    ).toEqual({
      outcome: 'verified',
    });
    expect(
      checkCaa(caa, [set('example.com', issue('letsencrypt.org; validationmethods=http-01,dns-01'))]).outcome,
    ).toBe('verified');
    const refused = checkCaa(caa, [none('links.mail.example.com'), set('mail.example.com', issue('digicert.com'))]);
    expect(refused).toEqual({
      outcome: 'mismatch',
      detail:
        'the CAA records at mail.example.com do not allow letsencrypt.org to issue: add 0 issue "letsencrypt.org"',
    });
    expect(checkCaa(caa, [set('example.com', issue(';'))]).outcome).toBe('mismatch');
    expect(
      checkCaa(caa, [
        set('example.com', issue('letsencrypt.org; accounturi=https://acme-v02.api.letsencrypt.org/acme/acct/1')),
      ]).outcome,
    ).toBe('mismatch');
    expect(checkCaa(caa, [set('example.com', issue('letsencrypt.org; validationmethods=dns-01'))]).outcome).toBe(
      'mismatch',
    );
    expect(
      checkCaa(caa, [set('example.com', issue('letsencrypt.org'), { critical: true, tag: 'tbs', value: 'x' })]).outcome,
    ).toBe('mismatch');
  });

  it('is temporary when a lookup on the way fails, so a DNS outage never fails it', () => {
    const finding = checkCaa(caa, [
      none('links.mail.example.com'),
      { name: 'mail.example.com', lookup: { ok: false, reason: 'temporary', detail: 'SERVFAIL' } },
    ]);
    expect(finding).toEqual({ outcome: 'temporary', detail: 'mail.example.com: SERVFAIL' });
  });

  it('never enters the domain status, and is verified only with both records', () => {
    const records = [
      ...['dkim', 'spf_mx', 'spf_txt'].map(() => ({ purpose: 'sending' as const, status: 'verified' as const })),
      { purpose: 'tracking' as const, status: 'verified' as const },
      { purpose: 'tracking' as const, status: 'temporary_failure' as const },
    ];
    expect(domainStatus(records, ['sending'], true)).toBe('verified');
    expect(purposeVerified(records, 'tracking')).toBe(false);
    expect(purposeVerified(records.slice(0, 4), 'tracking')).toBe(true);
    const pendingSending = records.map((r) => (r.purpose === 'sending' ? { ...r, status: 'failed' as const } : r));
    // A tracking lookup that timed out does not keep a domain whose sending records were never found from failing.
    expect(domainStatus(pendingSending, ['sending'], true)).toBe('failed');
  });

  it('keeps the back-off for a verified domain while its tracking records are searched for in the window', () => {
    expect(
      nextCheckDelay({
        status: 'verified',
        checks: 2,
        windowRemainingS: VERIFICATION_WINDOW_S,
        scale: 1,
        trackingPending: true,
      }),
    ).toBe(120);
    expect(
      nextCheckDelay({ status: 'verified', checks: 2, windowRemainingS: 0, scale: 1, trackingPending: true }),
    ).toBe(RECHECK_INTERVAL_S);
    expect(
      nextCheckDelay({
        status: 'verified',
        checks: 2,
        windowRemainingS: VERIFICATION_WINDOW_S,
        scale: 1,
        trackingPending: false,
      }),
    ).toBe(RECHECK_INTERVAL_S);
  });
});
