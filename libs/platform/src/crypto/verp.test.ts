import { describe, expect, it } from '@jest/globals';
import { parseVerp, verpAddress } from './verp.ts';

const key = 'verp-test-key-0123456789';
const emailId = '0192f3a4-5b6c-7d8e-9fa0-b1c2d3e4f5a6';

describe('verpAddress / parseVerp', () => {
  it('round-trips an email id and recipient index within the 64-octet local part limit', () => {
    const address = verpAddress({ emailId, recipient: 7, returnPath: 'send.example.com', key });
    expect(address).toMatch(/^b\.0192f3a45b6c7d8e9fa0b1c2d3e4f5a6\.7\.[a-z2-7]{10}@send\.example\.com$/);
    expect(address.split('@')[0]!.length).toBeLessThanOrEqual(64);
    expect(parseVerp(address, key)).toEqual({ emailId, recipient: 7 });
  });

  it('names the email only when no recipient is given', () => {
    const address = verpAddress({ emailId, returnPath: 'send.example.com', key });
    expect(address).toContain('.x.');
    expect(parseVerp(address, key)).toEqual({ emailId, recipient: null });
  });

  it('survives an MTA that changes the case of the address', () => {
    const address = verpAddress({ emailId, recipient: 0, returnPath: 'Send.Example.com', key });
    expect(parseVerp(address.toUpperCase(), key)).toEqual({ emailId, recipient: 0 });
  });

  it('refuses a modified recipient, email id, domain or tag, and a different key', () => {
    const address = verpAddress({ emailId, recipient: 3, returnPath: 'send.example.com', key });
    const [local, domain] = address.split('@') as [string, string];
    const parts = local.split('.');
    expect(parseVerp(`${[parts[0], parts[1], '4', parts[3]].join('.')}@${domain}`, key)).toBeUndefined();
    expect(
      parseVerp(`${[parts[0], parts[1]!.replace(/^0/, '1'), parts[2], parts[3]].join('.')}@${domain}`, key),
    ).toBeUndefined();
    expect(parseVerp(`${local}@send.other.com`, key)).toBeUndefined();
    const flipped = parts[3]!.slice(0, -1) + (parts[3]!.endsWith('a') ? 'b' : 'a');
    expect(parseVerp(`${[parts[0], parts[1], parts[2], flipped].join('.')}@${domain}`, key)).toBeUndefined();
    expect(parseVerp(address, 'another-key-0123456789')).toBeUndefined();
  });

  it('refuses addresses that are not VERP tokens', () => {
    expect(parseVerp('bounces@send.example.com', key)).toBeUndefined();
    expect(parseVerp('b.xyz.1.aaaaaaaaaa@send.example.com', key)).toBeUndefined();
    expect(parseVerp('no-at-sign', key)).toBeUndefined();
    const address = verpAddress({ emailId, recipient: 1, returnPath: 'send.example.com', key });
    expect(parseVerp(address.replace('.1.', '.01.'), key)).toBeUndefined();
  });

  it('rejects input it cannot encode', () => {
    expect(() => verpAddress({ emailId: 'not-a-uuid', returnPath: 'send.example.com', key })).toThrow();
    expect(() => verpAddress({ emailId, recipient: -1, returnPath: 'send.example.com', key })).toThrow();
  });
});
