import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The outcome of checking an address we are about to dial. `reason` is the ipaddr.js range label that
 * made it unsafe (`loopback`, `private`, `linkLocal`, `carrierGradeNat`, `uniqueLocal`, `rfc6052`, ...)
 * or `invalid` when the text is not an IP address.
 */
export type AddressCheck = { ok: true } | { ok: false; reason: string };

/**
 * Whether `ip` is a publicly routable unicast address: the only kind of address a customer-controlled
 * target (webhook endpoint, MX host) may make us dial. IPv4-mapped and IPv4-compatible IPv6 forms are
 * judged by the IPv4 address they carry (`::ffff:127.0.0.1` is loopback). Anything whose ipaddr.js range
 * is not `unicast` is refused, including NAT64 (`64:ff9b::/96`), 6to4 and Teredo, whose embedded IPv4
 * could lead anywhere. Only canonical IP text is accepted (what `socket.remoteAddress`, `dns.lookup` and
 * `new URL().hostname` produce); anything else, such as `127.1` or a bracketed IPv6, is not public.
 *
 * @example
 * isPublicAddress('93.184.216.34'); // true
 * isPublicAddress('::ffff:169.254.169.254'); // false (linkLocal)
 */
export function isPublicAddress(ip: string): boolean {
  return rangeOf(ip) === 'unicast';
}

/**
 * Checks an address before or right after connecting to it. With `allowPrivate` (local development and
 * tests, where receivers run on loopback or a private network) every valid IP address passes.
 *
 * @example
 * const check = checkTargetAddress(socket.remoteAddress ?? '', { allowPrivate: false });
 * if (!check.ok) socket.destroy(); // check.reason === 'loopback'
 */
export function checkTargetAddress(ip: string, options: { allowPrivate: boolean }): AddressCheck {
  const range = rangeOf(ip);
  if (range === 'invalid') return { ok: false, reason: 'invalid' };
  if (range === 'unicast' || options.allowPrivate) return { ok: true };
  return { ok: false, reason: range };
}

function rangeOf(ip: string): string {
  // node:net decides what is an IP address; ipaddr.js alone also parses `127.1` and `0x7f000001`.
  if (isIP(ip) === 0) return 'invalid';
  try {
    return ipaddr.process(ip).range();
  } catch {
    return 'invalid';
  }
}
