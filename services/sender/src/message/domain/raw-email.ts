// A raw email (POST /emails with message/rfc822, what the SMTP relay submits) → the request the JSON path
// would have made of it, its recipients and its envelope sender, or the refusal. The rules are the JSON
// path's (domain/email-request.ts: addresses, recipient count, tags); the MIME itself is the client's.
import { domainToASCII } from 'node:url';
import { parseMailbox, type Mailbox } from './address.ts';
import { MAX_RECIPIENTS_PER_FIELD, parseEmailRequest, type EmailRequest } from './email-request.ts';
import { envelopeRecipients } from './envelope-recipients.ts';
import type { Refusal } from './refusal.ts';

/** An address of a header as the MIME parser read it (display name decoded). */
export type RawAddress = { name: string; address: string };

/** What the message says, as read by the MIME parser (mime/raw-parse.ts) and from its header fields. */
export type RawMessageFields = {
  /** How many times each header field occurs, by lower-case name. */
  fieldCounts: ReadonlyMap<string, number>;
  from: RawAddress[];
  to: RawAddress[];
  cc: RawAddress[];
  bcc: RawAddress[];
  replyTo: RawAddress[];
  subject: string | null;
  html: string | null;
  text: string | null;
  /** The X-Postline-Tags (else X-Resend-Tags) header's value, unfolded; null without one. */
  tags: { header: string; value: string } | null;
  /** The Message-ID header's value, unfolded; null without one. */
  messageId: string | null;
  hasDate: boolean;
};

/** The envelope the relay gives (Postline-Envelope-From / -To); undefined when the header is absent. */
export type RawEnvelope = { from: string | undefined; to: string | undefined };

export type RawEmailRequest = {
  /** As the JSON path's: from, to/cc/reply_to for GET /emails/{id}, bcc = the recipients not in to or cc. */
  request: EmailRequest;
  /** Where it is delivered: the envelope's recipients, each once. */
  recipients: string[];
  /** The envelope sender's domain (punycode, lower-case), which must be verified too; null when empty. */
  envelopeFromDomain: string | null;
  /** The Message-ID header to add, and the Date (fixed at accept); null when the message has them. */
  messageId: string;
  addMessageId: boolean;
};

export type ParsedRawEmail = { ok: true; email: RawEmailRequest } | { ok: false; refusal: Refusal };

/**
 * Header fields RFC 5322 §3.6 allows once. A second copy is refused: DKIM verifiers read the bottom-most
 * instance while many readers show the top one, so a duplicate From or Subject is how a forged header
 * passes a signature (RFC 6376 §5.4.2).
 */
export const SINGLETON_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'To',
  'Cc',
  'Bcc',
  'Subject',
  'Date',
  'Message-ID',
  'In-Reply-To',
  'References',
];

/** Line breaks, NUL and the other C0 controls (tab excepted) and DEL, as email-request.ts refuses them. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/g;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const MESSAGE_ID = /^<[^<>\s\x00-\x1f\x7f]{1,994}>$/;

function validation(message: string): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { name: 'validation_error', message } };
}

function missing(message: string): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { name: 'missing_required_field', message } };
}

/**
 * The request of a raw email, given its fields, its envelope and the id it will have; or the first reason
 * it is refused. Recipients are the envelope's (RCPT TO) when it names them, else the To, Cc and Bcc
 * headers' (a client posting a message without an envelope, as `sendmail -t` reads one).
 */
export function parseRawEmail(fields: RawMessageFields, envelope: RawEnvelope, id: string): ParsedRawEmail {
  for (const name of SINGLETON_HEADERS) {
    if ((fields.fieldCounts.get(name.toLowerCase()) ?? 0) > 1) {
      return validation(`The message has more than one \`${name}\` header; it may have at most one.`);
    }
  }
  if (fields.from.length === 0) return missing('The message has no `From` header.');
  if (fields.from.length > 1) return validation('The `From` header must name exactly one address.');
  const fromHeader = mailboxText(fields.from[0] as RawAddress);
  const from = parseMailbox(fromHeader);
  if (!from) return invalidAddress('From', fromHeader);

  const to = headerAddresses(fields.to, 'To');
  if (!Array.isArray(to)) return to;
  const cc = headerAddresses(fields.cc, 'Cc');
  if (!Array.isArray(cc)) return cc;
  const replyTo = headerAddresses(fields.replyTo, 'Reply-To');
  if (!Array.isArray(replyTo)) return replyTo;

  let recipients: string[];
  if (envelope.to !== undefined && envelope.to.trim() !== '') {
    const listed = envelopeAddresses(envelope.to);
    if (!Array.isArray(listed)) return listed;
    recipients = envelopeRecipients({ to: listed, cc: [], bcc: [] });
  } else {
    const bcc = headerAddresses(fields.bcc, 'Bcc');
    if (!Array.isArray(bcc)) return bcc;
    recipients = envelopeRecipients({ to, cc, bcc });
  }
  if (recipients.length === 0)
    return missing('The message has no recipients: give them in the envelope (RCPT TO) or in To, Cc or Bcc.');
  if (recipients.length > MAX_RECIPIENTS_PER_FIELD) {
    return validation(
      `The message has ${recipients.length} recipients; at most ${MAX_RECIPIENTS_PER_FIELD} are allowed.`,
    );
  }
  const shown = new Set(envelopeRecipients({ to, cc, bcc: [] }).map((address) => address.toLowerCase()));
  const bcc = recipients.filter((address) => !shown.has(address.toLowerCase()));

  let envelopeFromDomain: string | null = null;
  const envelopeFrom = envelope.from?.trim().replace(/^<(.*)>$/, '$1') ?? '';
  if (envelopeFrom !== '') {
    const sender = parseMailbox(envelopeFrom);
    if (!sender || sender.name !== null) return invalidAddress('envelope sender (MAIL FROM)', envelopeFrom);
    envelopeFromDomain = domainOfMailbox(sender);
  }

  const tags = parseTagsHeader(fields.tags);
  if (!Array.isArray(tags)) return tags;

  const fromDomain = domainOfMailbox(from);
  let messageId = `<${id}@${fromDomain}>`;
  if (fields.messageId !== null) {
    if (!MESSAGE_ID.test(fields.messageId))
      return validation('The `Message-ID` header must be one `<id@domain>` value.');
    messageId = fields.messageId;
  }

  const request: EmailRequest = {
    from,
    fromDomain,
    fromHeader,
    to,
    cc,
    bcc,
    replyTo,
    subject: displayText(fields.subject ?? '').slice(0, 998),
    html: fields.html === null ? null : storableText(fields.html),
    text: fields.text === null ? null : storableText(fields.text),
    headers: [],
    attachments: [],
    tags,
    scheduledAt: null,
    topicId: null,
  };
  return {
    ok: true,
    email: { request, recipients, envelopeFromDomain, messageId, addMessageId: fields.messageId === null },
  };
}

/**
 * `Name <a@b>` or `a@b`, what parseMailbox reads back: the name's controls made spaces, and the name quoted
 * when it holds a special (RFC 5322 §3.2.3) such as a comma.
 */
function mailboxText(mailbox: RawAddress): string {
  const name = displayText(mailbox.name).trim();
  if (name === '') return mailbox.address;
  const shown = /[()<>[\]:;@\\,."]/.test(name) ? `"${name.replace(/["\\]/g, '\\$&')}"` : name;
  return `${shown} <${mailbox.address}>`;
}

function invalidAddress(header: string, value: string): { ok: false; refusal: Refusal } {
  return validation(
    `Invalid ${header.includes(' ') ? header : `\`${header}\` header`}: ${JSON.stringify(value)} is not an email address of the \`email@example.com\` form.`,
  );
}

/** A header's addresses as JSON sends them (`Name <a@b>`), at most MAX_RECIPIENTS_PER_FIELD. */
function headerAddresses(addresses: readonly RawAddress[], header: string): string[] | { ok: false; refusal: Refusal } {
  if (addresses.length > MAX_RECIPIENTS_PER_FIELD) {
    return validation(
      `The \`${header}\` header names ${addresses.length} addresses; at most ${MAX_RECIPIENTS_PER_FIELD} are allowed.`,
    );
  }
  const out: string[] = [];
  for (const address of addresses) {
    const text = mailboxText(address);
    if (!parseMailbox(text)) return invalidAddress(header, text);
    out.push(text);
  }
  return out;
}

/** The envelope's recipients: addresses separated by commas, each bare or in angle brackets. */
function envelopeAddresses(list: string): string[] | { ok: false; refusal: Refusal } {
  const out: string[] = [];
  for (const item of list.split(',')) {
    const address = item.trim().replace(/^<(.*)>$/, '$1');
    if (address === '') continue;
    const mailbox = parseMailbox(address);
    if (!mailbox || mailbox.name !== null) return invalidAddress('envelope recipient (RCPT TO)', address);
    out.push(mailbox.address);
  }
  return out;
}

function domainOfMailbox(mailbox: Mailbox): string {
  return domainToASCII(mailbox.address.slice(mailbox.address.lastIndexOf('@') + 1));
}

/** Header text as GET /emails/{id} shows it: controls (a folded line's break, a NUL) made spaces. */
function displayText(value: string): string {
  return value.replace(CONTROL, ' ').toWellFormed();
}

/** A body as Postgres text can hold it: without NUL and lone surrogates. */
function storableText(value: string): string {
  return value.replaceAll('\0', '').toWellFormed();
}

/**
 * `X-Postline-Tags: name=value, name2=value2` (or X-Resend-Tags) → tags, checked by the JSON path's own
 * tag rules (the same limits and messages as `tags` in a JSON body).
 */
export function parseTagsHeader(
  tags: RawMessageFields['tags'],
): { name: string; value: string }[] | { ok: false; refusal: Refusal } {
  if (tags === null || tags.value.trim() === '') return [];
  const list: { name: string; value: string }[] = [];
  for (const item of tags.value.split(',')) {
    const entry = item.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    if (eq < 0)
      return validation(`Invalid \`${tags.header}\` header: each tag is \`name=value\`, tags separated by commas.`);
    list.push({ name: entry.slice(0, eq).trim(), value: entry.slice(eq + 1).trim() });
  }
  // The tag rules are the JSON body's: run them on a body that is valid but for its tags.
  const checked = parseEmailRequest(
    { from: 'tags@example.com', to: 'tags@example.com', subject: '', text: '-', tags: list },
    { now: new Date(0), batch: false },
  );
  return checked.ok ? checked.request.tags : { ok: false, refusal: checked.refusal };
}
