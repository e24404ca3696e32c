// The mailbox provider behind a recipient's MX host: what the metrics break deliveries down by. From the MX,
// not the address's domain, so a company's own domain hosted at Google or Microsoft counts as theirs.

export const PROVIDERS = ['gmail', 'microsoft', 'yahoo', 'apple', 'other'] as const;
export type Provider = (typeof PROVIDERS)[number];

const PATTERNS: [Provider, RegExp][] = [
  ['gmail', /(^|\.)(google\.com|googlemail\.com)$/],
  ['microsoft', /(^|\.)(outlook\.com|hotmail\.com|microsoft\.com)$/],
  ['yahoo', /(^|\.)(yahoodns\.net|yahoo\.com|aol\.com)$/],
  ['apple', /(^|\.)(icloud\.com|me\.com|apple\.com)$/],
];

/** The provider of an MX host name (`gmail-smtp-in.l.google.com` → gmail); `other` for the rest. */
export function providerOfMx(mx: string): Provider {
  const host = mx.toLowerCase().replace(/\.$/, '');
  return PATTERNS.find(([, pattern]) => pattern.test(host))?.[0] ?? 'other';
}
