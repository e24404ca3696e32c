import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import { parse } from 'tldts';
import { DNS_LABEL, SANDBOX_DOMAINS } from '@postline/contracts';

/** A domain name as we store it: lower-case ASCII (IDNs in punycode), no trailing dot. */
export type DomainName = {
  name: string;
  /** The registrable domain (`example.com` for `mail.example.com`): the zone DNS records are entered in. */
  zone: string;
};

export type NameCheck = { ok: true; domain: DomainName } | { ok: false; message: string };

/**
 * Checks a domain name a customer wants to send from or receive at. Refused: anything that is not a host
 * name, an IP address, a single label, a public suffix (ICANN or private section of the Public Suffix List:
 * `co.uk`, `github.io`), since nobody can own the records of a suffix, and the sandbox's domains.
 */
export function checkDomainName(input: string): NameCheck {
  const trimmed = input.trim().replace(/\.$/, '');
  const bad = (why: string): NameCheck => ({
    ok: false,
    message: `The \`name\` field must be a valid domain name (${why}).`,
  });
  if (trimmed === '') return bad('it is empty');
  if (isIP(trimmed) !== 0 || isIP(trimmed.replace(/^\[|\]$/g, '')) !== 0) return bad('an IP address is not a domain');
  if (/[\s/@:?#]/.test(trimmed)) return bad('only the host name, without scheme, path or address');
  const ascii = domainToASCII(trimmed);
  if (ascii === '') return bad('it is not a host name');
  if (ascii.length > 253) return bad('at most 253 characters');
  const labels = ascii.split('.');
  if (labels.length < 2) return bad('at least two labels, such as example.com');
  if (!labels.every((l) => DNS_LABEL.test(l)))
    return bad('labels are letters, digits and inner hyphens, up to 63 each');
  if (/^\d+$/.test(labels.at(-1) ?? '')) return bad('an IP address is not a domain');
  const reserved = SANDBOX_DOMAINS.find((d) => ascii === d || ascii.endsWith(`.${d}`));
  if (reserved) return bad(`\`${reserved}\` holds the test addresses, which no team can own`);
  const parsed = parse(ascii, { allowPrivateDomains: true });
  if (parsed.isIp) return bad('an IP address is not a domain');
  if (!parsed.domain) return bad(`\`${ascii}\` is a public suffix`);
  return { ok: true, domain: { name: ascii, zone: parsed.domain } };
}

/** `mail.example.com` in zone `example.com` → `mail`; the apex → `''`. */
export function relativeTo(fqdn: string, zone: string): string {
  if (fqdn === zone) return '';
  return fqdn.endsWith(`.${zone}`) ? fqdn.slice(0, -(zone.length + 1)) : fqdn;
}
