import { describe, expect, it } from '@jest/globals';
import { bareAddress, envelopeRecipients, groupByDomain } from './envelope-recipients.ts';

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
