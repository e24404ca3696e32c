import { describe, expect, it } from '@jest/globals';
import { checkTargetAddress, isPublicAddress } from './address-policy.ts';

// Every range ipaddr.js labels other than `unicast` is refused (an IPv4-mapped address is judged as its IPv4).
const internal: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['0.0.0.0', 'unspecified'],
  ['::', 'unspecified'],
  ['198.18.0.1', 'reserved'],
  ['192.0.0.1', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['2001:db8::', 'reserved'],
  ['fc00::1', 'uniqueLocal'],
  ['fd00::1', 'uniqueLocal'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:169.254.169.254', 'linkLocal'],
  ['::ffff:10.0.0.5', 'private'],
  ['::127.0.0.1', 'loopback'],
  ['::ffff:0:7f00:1', 'rfc6145'],
  ['64:ff9b::7f00:1', 'rfc6052'],
  ['64:ff9b::5db8:d822', 'rfc6052'],
  ['2002:7f00:1::', '6to4'],
  ['2001::1', 'teredo'],
  ['224.0.0.1', 'multicast'],
  ['ff02::1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['100::1', 'discard'],
];

const notAddresses = [
  '',
  'localhost',
  'example.com',
  '127.1',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  '[::1]',
  '1.2.3.4.5',
  '::ffff:127.0.0.1:80',
];

const publicAddresses = [
  '93.184.216.34',
  '8.8.8.8',
  '1.1.1.1',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:93.184.216.34',
];

describe('isPublicAddress', () => {
  it.each(internal)('refuses %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each(notAddresses)('refuses %j, which is not canonical IP text', (text) => {
    expect(isPublicAddress(text)).toBe(false);
  });

  it.each(publicAddresses)('accepts the public address %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });
});

describe('checkTargetAddress', () => {
  it.each(internal)('names the range of %s (%s) as the reason', (ip, range) => {
    expect(checkTargetAddress(ip, { allowPrivate: false })).toEqual({ ok: false, reason: range });
  });

  it('passes public addresses', () => {
    for (const ip of publicAddresses) expect(checkTargetAddress(ip, { allowPrivate: false })).toEqual({ ok: true });
  });

  it('passes internal addresses when private targets are allowed', () => {
    for (const [ip] of internal) expect(checkTargetAddress(ip, { allowPrivate: true })).toEqual({ ok: true });
  });

  it('refuses text that is not an IP address even when private targets are allowed', () => {
    for (const text of notAddresses) {
      expect(checkTargetAddress(text, { allowPrivate: true })).toEqual({ ok: false, reason: 'invalid' });
    }
  });
});
