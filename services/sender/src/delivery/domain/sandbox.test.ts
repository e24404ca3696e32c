import { describe, expect, it } from '@jest/globals';
import { bareAddress, envelopeRecipients, groupByDomain } from '../../message/domain/envelope-recipients.ts';
import { retryDelayMs } from './retry.ts';
import { sandboxResult } from './sandbox.ts';

describe('envelope recipients', () => {
  it('takes the bare address, lower-cases and punycodes the domain, keeps the local part', () => {
    expect(bareAddress('Ann Lee <Ann.Lee@Example.COM>')).toBe('Ann.Lee@example.com');
    expect(bareAddress('a@bücher.example')).toBe('a@xn--bcher-kva.example');
  });

  it('lists to, cc and bcc once each, compared without case', () => {
    expect(envelopeRecipients({ to: ['a@x.test', 'B <b@x.test>'], cc: ['A@X.test'], bcc: ['c@y.test'] })).toEqual([
      'a@x.test',
      'b@x.test',
      'c@y.test',
    ]);
  });

  it('groups positions by domain, at most 50 per transaction', () => {
    expect(groupByDomain(['a@x.com', 'b@y.com', 'c@X.com'])).toEqual([
      { domain: 'x.com', positions: [0, 2] },
      { domain: 'y.com', positions: [1] },
    ]);
    const many = Array.from({ length: 120 }, (_, i) => `u${i}@big.test`);
    expect(groupByDomain(many).map((g) => g.positions.length)).toEqual([50, 50, 20]);
  });
});

describe('retry back-off', () => {
  it('doubles from 5 minutes to a 67-minute cap, scaled, within ±10%', () => {
    const minute = 60_000;
    expect(retryDelayMs(1, 1, () => 0.5)).toBe(5 * minute);
    expect(retryDelayMs(2, 1, () => 0.5)).toBe(10 * minute);
    expect(retryDelayMs(5, 1, () => 0.5)).toBe(67 * minute);
    expect(retryDelayMs(40, 1, () => 0.5)).toBe(67 * minute);
    expect(retryDelayMs(1, 1, () => 0)).toBe(4.5 * minute);
    expect(retryDelayMs(1, 1, () => 1)).toBe(5.5 * minute);
    expect(retryDelayMs(1, 0.001, () => 0.5)).toBe(300);
  });
});

describe('sandbox addresses', () => {
  it('stand for their outcome, with +label except for suppressed@', () => {
    expect(sandboxResult('delivered+x@postline.test').kind).toBe('delivered');
    expect(sandboxResult('complained@postline.test').kind).toBe('complained');
    expect(sandboxResult('suppressed@postline.test')).toEqual({ kind: 'suppressed', reason: 'previous_bounce' });
    expect(sandboxResult('bounced+y@postline.test')).toMatchObject({
      kind: 'bounced',
      code: 550,
      bounce: { type: 'Permanent', suppress: false },
    });
    // suppressed@ takes no label, and an unknown mailbox does not exist.
    expect(sandboxResult('suppressed+z@postline.test')).toMatchObject({
      kind: 'bounced',
      bounce: { subType: 'NoEmail' },
    });
    expect(sandboxResult('nobody@postline.test')).toMatchObject({ kind: 'bounced', bounce: { subType: 'NoEmail' } });
  });
});
