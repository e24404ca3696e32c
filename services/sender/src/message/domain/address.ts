// The address grammar of the API: a mailbox (`a@b.com` or `Name <a@b.com>`), stricter than RFC 5322 on
// purpose.
import { domainToASCII } from 'node:url';
import { CONTROL_CHARACTERS as CONTROL } from '@postline/contracts';

/** One parsed address. `address` is as given with the domain lower-cased (an IDN stays in Unicode). */
export type Mailbox = { name: string | null; address: string };

const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LOCAL_PART = new RegExp(`^${ATEXT}(?:\\.${ATEXT})*$`);
const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TOP_LABEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/**
 * Parses `a@b.com` or `Name <a@b.com>` (the name may be quoted: `"Acme, Inc." <a@b.com>`). Stricter than
 * RFC 5322 on purpose: no groups, comments, quoted local parts or IP literals, a dot-atom ASCII local part
 * and a public-looking domain (IDNs allowed). Returns null when the value is not such a mailbox.
 */
export function parseMailbox(value: string): Mailbox | null {
  const input = value.trim();
  if (input === '' || CONTROL.test(input)) return null;
  let name: string | null = null;
  let spec = input;
  if (input.endsWith('>')) {
    const open = input.lastIndexOf('<');
    if (open < 0) return null;
    spec = input.slice(open + 1, -1).trim();
    const parsed = displayName(input.slice(0, open).trim());
    if (parsed === undefined) return null;
    name = parsed;
  }
  const at = spec.lastIndexOf('@');
  if (at <= 0) return null;
  const local = spec.slice(0, at);
  const domain = spec.slice(at + 1);
  if (local.length > 64 || !LOCAL_PART.test(local)) return null;
  const ascii = asciiDomain(domain);
  if (ascii === null || local.length + 1 + ascii.length > 254) return null;
  return { name, address: `${local}@${domain.toLowerCase()}` };
}

/** undefined: not a valid display name. "" and `""` are no name. */
function displayName(raw: string): string | null | undefined {
  let name = raw;
  if (raw.startsWith('"')) {
    const match = /^"((?:[^"\\]|\\.)*)"$/.exec(raw);
    if (!match) return undefined;
    name = (match[1] ?? '').replace(/\\(.)/g, '$1');
  } else if (/[<>"]/.test(raw)) {
    return undefined;
  }
  if (name.length > 256) return undefined;
  return name.trim() === '' ? null : name;
}

/** The domain in lower-case punycode, or null unless it is a hostname of two or more labels. */
function asciiDomain(domain: string): string | null {
  if (domain === '' || /[\s[\]]/.test(domain)) return null;
  const ascii = domainToASCII(domain);
  if (ascii === '' || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label))) return null;
  return TOP_LABEL.test(labels[labels.length - 1] ?? '') ? ascii : null;
}
