import { domainToASCII } from 'node:url';

/** The bare address of `Name <a@b>` or `a@b`, its domain part lower-cased and in punycode. */
export function bareAddress(mailbox: string): string {
  const angle = /<([^<>]*)>\s*$/.exec(mailbox);
  const address = (angle?.[1] ?? mailbox).trim();
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const domain = domainToASCII(address.slice(at + 1).toLowerCase()) || address.slice(at + 1).toLowerCase();
  return `${address.slice(0, at)}@${domain}`;
}

/** The domain part, lower-case: the key recipients are grouped and delivered by. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/** Envelope recipients: to, cc and bcc in that order, each address once (compared case-insensitively). */
export function envelopeRecipients(fields: {
  to: readonly string[];
  cc: readonly string[];
  bcc: readonly string[];
}): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const mailbox of [...fields.to, ...fields.cc, ...fields.bcc]) {
    const address = bareAddress(mailbox);
    const key = address.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(address);
  }
  return out;
}

/** RFC 5321 caps recipients per transaction at 100; Postfix sends 50 per transaction by default. */
export const RECIPIENTS_PER_TRANSACTION = 50;

/**
 * Groups recipient positions by domain, at most 50 per group: one group is one SMTP transaction.
 *
 * @example
 * groupByDomain(['a@x.com', 'b@y.com', 'c@x.com']) // [{ domain: 'x.com', positions: [0, 2] }, { domain: 'y.com', positions: [1] }]
 */
export function groupByDomain(addresses: readonly string[]): { domain: string; positions: number[] }[] {
  const groups = new Map<string, number[][]>();
  addresses.forEach((address, position) => {
    const domain = domainOf(address);
    const chunks = groups.get(domain) ?? [];
    const last = chunks.at(-1);
    if (last && last.length < RECIPIENTS_PER_TRANSACTION) last.push(position);
    else chunks.push([position]);
    groups.set(domain, chunks);
  });
  return [...groups].flatMap(([domain, chunks]) => chunks.map((positions) => ({ domain, positions })));
}
