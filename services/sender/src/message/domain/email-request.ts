import { domainToASCII } from 'node:url';
import { isUuid } from '@postline/platform/pure';
import { CONTROL, parseMailbox, type Mailbox } from './address.ts';
import type { Refusal } from './refusal.ts';
import { parseScheduledAt } from './scheduled-at.ts';

/** A POST /emails body (one item of a batch), checked and normalised (the fields of Resend's POST /emails). */
export type EmailRequest = {
  from: Mailbox;
  /** Lower-case, IDNs in punycode: the domain that must be verified and that signs. */
  fromDomain: string;
  /** The `from` string as sent, for events and GET /emails/{id} ("Acme <o@x.com>"). */
  fromHeader: string;
  /** Trimmed, each one a valid `a@b.com` or `Name <a@b.com>`; use parseMailbox for the address. */
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  html: string | null;
  /** null: not given, generated from html when composing; "": the sender opted out of a text part. */
  text: string | null;
  /** Custom headers in the order given; names and values checked against header injection. */
  headers: { name: string; value: string }[];
  attachments: EmailAttachment[];
  tags: { name: string; value: string }[];
  scheduledAt: Date | null;
  /**
   * The topic the email is sent under. The sender must apply the contact's subscription to it (an
   * opted-out contact is not sent to) or refuse it; it is not a label to store and ignore.
   */
  topicId: string | null;
  /** The template rendered into the body (set by the caller that rendered it; the body does not say). */
  templateId?: string;
};

export type EmailAttachment = {
  filename: string | null;
  /** null: derived from the filename when composing. */
  contentType: string | null;
  /** Set: an inline part the html refers to as `cid:<contentId>`. Without angle brackets. */
  contentId: string | null;
  content: Buffer;
};

export type ParseEmailOptions = {
  /** The reference time for `scheduled_at` ("in 1 min"). */
  now: Date;
  /** An item of POST /emails/batch, where attachments are not allowed. */
  batch: boolean;
};

export const MAX_RECIPIENTS_PER_FIELD = 50;
export const MAX_TAGS = 75;
export const MAX_TAG_LENGTH = 256;
/** Attachments' total size counted as base64, as the reference states it ("≤40 MB after base64"). */
export const MAX_ATTACHMENTS_BASE64_BYTES = 40 * 1024 * 1024;

const FROM_FORMAT = 'The email address needs to follow the `email@example.com` or `Name <email@example.com>` format';
/** RFC 5322 field name: printable ASCII except the colon. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const TAG_TEXT = /^[A-Za-z0-9_-]+$/;
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const CONTENT_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:\\s*;.*)?$`);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Headers the API may not set through `headers`: the ones we write ourselves from other fields or while composing and
 * signing (a second copy of a singleton is what lets a forged header pass DKIM, RFC 6376 §5.4.2), and authentication
 * results a receiver might trust.
 */
const RESERVED_HEADERS = new Map<string, string>([
  ['from', 'from'],
  ['sender', 'from'],
  ['reply-to', 'reply_to'],
  ['to', 'to'],
  ['cc', 'cc'],
  ['bcc', 'bcc'],
  ['subject', 'subject'],
  ['date', ''],
  ['message-id', ''],
  ['mime-version', ''],
  ['content-type', 'attachments'],
  ['content-transfer-encoding', ''],
  ['content-disposition', 'attachments'],
  ['content-id', 'attachments'],
  ['return-path', ''],
  ['dkim-signature', ''],
  ['arc-seal', ''],
  ['arc-message-signature', ''],
  ['arc-authentication-results', ''],
  ['authentication-results', ''],
  ['received-spf', ''],
]);

/** A parsed request, or why it is refused. */
export type ParsedEmailRequest = { ok: true; request: EmailRequest } | { ok: false; refusal: Refusal };

/**
 * Checks a POST /emails body (or one batch item) and returns it normalised, or the first reason it is
 * refused. Unknown keys are ignored and `null` means absent, as the SDKs send both.
 */
export function parseEmailRequest(body: unknown, options: ParseEmailOptions): ParsedEmailRequest {
  const request = emailRequest(body, options);
  return request instanceof Refused ? refused(request) : { ok: true, request };
}

/** `template: {id, variables}` of a POST /emails body: the template's id or alias and the values given. */
export type TemplateReference = { idOrAlias: string; variables: Record<string, unknown> };

export type ParsedTemplateReference =
  | { ok: true; template: TemplateReference | null }
  | { ok: false; refusal: Refusal };

/** Whether a POST /emails body (or batch item) names a template: the one check a send without one pays. */
export function usesTemplate(body: unknown): boolean {
  return typeof body === 'object' && body !== null && present((body as Record<string, unknown>).template);
}

/**
 * The `template` of a body (null without one), or why it is refused. With a template the content is the
 * template's: `html` and `text` are refused (the SDK renders `react` into `html`, so that is covered too).
 * The values are checked against the template's declared variables once it is read.
 */
export function parseTemplateReference(body: unknown): ParsedTemplateReference {
  if (!usesTemplate(body)) return { ok: true, template: null };
  const fields = body as Record<string, unknown>;
  const template = fields.template;
  if (typeof template !== 'object' || template === null || Array.isArray(template)) {
    return refused(invalid('Invalid `template` field: it must be an object with `id` and `variables`.'));
  }
  const { id, variables } = template as Record<string, unknown>;
  if (!present(id) || id === '') return refused(missingField('template.id'));
  if (typeof id !== 'string')
    return refused(invalid('Invalid `template.id` field: it must be a template id or alias.'));
  if (present(variables) && (typeof variables !== 'object' || Array.isArray(variables))) {
    return refused(invalid('Invalid `template.variables` field: it must be an object of keys to values.'));
  }
  for (const field of ['html', 'text', 'react']) {
    if (present(fields[field])) {
      return refused(
        invalid(`The \`${field}\` field cannot be used with \`template\`: the template's content is sent.`),
      );
    }
  }
  return { ok: true, template: { idOrAlias: id.trim(), variables: (variables ?? {}) as Record<string, unknown> } };
}

/**
 * A refusal found while parsing. A class, private to this file, only so that `instanceof` tells it from a
 * parsed value (a string, an array, null); what leaves the file is a plain Refusal.
 */
class Refused implements Refusal {
  readonly name: Refusal['name'];
  readonly message: string;

  constructor(name: Refusal['name'], message: string) {
    this.name = name;
    this.message = message;
  }
}

function refused(refusal: Refused): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { name: refusal.name, message: refusal.message } };
}

function invalid(message: string): Refused {
  return new Refused('validation_error', message);
}

function missingField(field: string): Refused {
  return new Refused('missing_required_field', `Missing \`${field}\` field.`);
}

function invalidParameter(message: string): Refused {
  return new Refused('invalid_parameter', message);
}

function invalidAttachment(message: string): Refused {
  return new Refused('invalid_attachment', message);
}

/** The fields are checked in this order; the first refusal is the answer. */
function emailRequest(body: unknown, options: ParseEmailOptions): EmailRequest | Refused {
  const input = body ?? {};
  if (typeof input !== 'object' || Array.isArray(input)) return invalid('The email must be a JSON object.');
  const fields = input as Record<string, unknown>;

  const fromHeader = fields.from;
  if (!present(fromHeader) || fromHeader === '') return missingField('from');
  const from = typeof fromHeader === 'string' ? parseMailbox(fromHeader) : null;
  if (typeof fromHeader !== 'string' || !from) return invalidParameter(`Invalid \`from\` field. ${FROM_FORMAT}`);

  const to = fields.to === '' ? [] : parseRecipients(fields.to, 'to');
  if (to instanceof Refused) return to;
  if (to.length === 0) return missingField('to');
  const cc = parseRecipients(fields.cc, 'cc');
  if (cc instanceof Refused) return cc;
  const bcc = parseRecipients(fields.bcc, 'bcc');
  if (bcc instanceof Refused) return bcc;
  const replyTo = parseRecipients(fields.reply_to, 'reply_to');
  if (replyTo instanceof Refused) return replyTo;

  if (!present(fields.subject)) return missingField('subject');
  const subject = fields.subject;
  if (typeof subject !== 'string') return invalid('Invalid `subject` field: it must be a string.');
  if (CONTROL.test(subject))
    return invalid('Invalid `subject` field: it must not contain line breaks or control characters.');
  if (subject.length > 998) return invalid('Invalid `subject` field: it must be at most 998 characters.');

  const html = optionalString(fields.html, 'html');
  if (html instanceof Refused) return html;
  const text = optionalString(fields.text, 'text');
  if (text instanceof Refused) return text;
  if (html === null && (text === null || text === '')) return invalid('Missing `html` or `text` field.');

  if (options.batch && Array.isArray(fields.attachments) && fields.attachments.length > 0) {
    return invalid('Attachments are not supported in batch emails.');
  }

  const headers = parseHeaders(fields.headers);
  if (headers instanceof Refused) return headers;
  const attachments = parseAttachments(fields.attachments);
  if (attachments instanceof Refused) return attachments;
  const tags = parseTags(fields.tags);
  if (tags instanceof Refused) return tags;
  const scheduledAt = optionalScheduledAt(fields.scheduled_at, options.now);
  if (scheduledAt instanceof Refused) return scheduledAt;
  const topicId = parseTopicId(fields.topic_id);
  if (topicId instanceof Refused) return topicId;

  return {
    from,
    fromDomain: domainToASCII(from.address.slice(from.address.lastIndexOf('@') + 1)),
    fromHeader: fromHeader.trim(),
    to,
    cc,
    bcc,
    replyTo,
    subject,
    html,
    text,
    headers,
    attachments,
    tags,
    scheduledAt,
    topicId,
  };
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function parseRecipients(value: unknown, field: string): string[] | Refused {
  if (!present(value)) return [];
  const list: unknown = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) return invalid(`Invalid \`${field}\` field: it must be a string or an array of strings.`);
  if (list.length > MAX_RECIPIENTS_PER_FIELD) {
    return invalid(`Invalid \`${field}\` field: at most ${MAX_RECIPIENTS_PER_FIELD} addresses are allowed.`);
  }
  const recipients: string[] = [];
  for (const item of list as unknown[]) {
    if (typeof item !== 'string' || !parseMailbox(item)) return invalid(`Invalid \`${field}\` field. ${FROM_FORMAT}.`);
    recipients.push(item.trim());
  }
  return recipients;
}

function optionalString(value: unknown, field: string): string | null | Refused {
  if (!present(value)) return null;
  if (typeof value !== 'string') return invalid(`Invalid \`${field}\` field: it must be a string.`);
  // Checked here, per email, so that a batch item with a NUL is that item's error, not the whole batch's
  // failed statement (Postgres text cannot hold U+0000).
  if (value.includes('\0')) return invalid(`Invalid \`${field}\` field: it must not contain NUL characters.`);
  return value;
}

function parseHeaders(value: unknown): { name: string; value: string }[] | Refused {
  if (!present(value)) return [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    return invalid('Invalid `headers` field: it must be an object of header names to string values.');
  }
  const seen = new Set<string>();
  const headers: { name: string; value: string }[] = [];
  for (const [name, headerValue] of Object.entries(value as Record<string, unknown>)) {
    const label = JSON.stringify(name);
    if (CONTROL.test(name) || !FIELD_NAME.test(name)) {
      return invalid(`Invalid header name ${label}: a header name is printable ASCII without spaces or colons.`);
    }
    const key = name.toLowerCase();
    const reserved = RESERVED_HEADERS.get(key);
    if (reserved !== undefined) {
      return invalid(
        reserved === ''
          ? `The ${label} header is set by Postline and cannot be given in \`headers\`.`
          : `The ${label} header cannot be given in \`headers\`; use the \`${reserved}\` field.`,
      );
    }
    if (seen.has(key)) return invalid(`Duplicate header ${label}: header names are case-insensitive.`);
    seen.add(key);
    if (typeof headerValue !== 'string') return invalid(`Invalid value of header ${label}: it must be a string.`);
    if (CONTROL.test(headerValue)) {
      return invalid(`Invalid value of header ${label}: it must not contain line breaks or control characters.`);
    }
    // RFC 5322 §2.1.1: a line is at most 998 characters, and a value without spaces cannot be folded.
    if (name.length + 2 + headerValue.length > 998) {
      return invalid(`Invalid value of header ${label}: a header is at most 998 characters.`);
    }
    headers.push({ name, value: headerValue });
  }
  return headers;
}

function parseAttachments(value: unknown): EmailAttachment[] | Refused {
  if (!present(value)) return [];
  if (!Array.isArray(value)) return invalid('Invalid `attachments` field: it must be an array.');
  let base64Bytes = 0;
  const parsed: EmailAttachment[] = [];
  for (let index = 0; index < value.length; index++) {
    const attachment = parseAttachment(value[index], index);
    if (attachment instanceof Refused) return attachment;
    base64Bytes += Math.ceil(attachment.content.length / 3) * 4;
    parsed.push(attachment);
  }
  if (base64Bytes > MAX_ATTACHMENTS_BASE64_BYTES) {
    return invalid('Attachments exceed the 40 MB limit per email (counted after base64 encoding).');
  }
  return parsed;
}

function parseAttachment(item: unknown, index: number): EmailAttachment | Refused {
  const at = `attachments[${index}]`;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return invalidAttachment(`Invalid \`${at}\`: an attachment must be an object with \`content\`.`);
  }
  const fields = item as Record<string, unknown>;
  if (present(fields.path)) {
    return invalidAttachment(
      `Invalid \`${at}\`: attachments by remote \`path\` are not supported yet; send the file as base64 \`content\`.`,
    );
  }
  if (!present(fields.content) || fields.content === '') {
    return invalidAttachment(`Invalid \`${at}\`: an attachment must have \`content\` or \`path\`.`);
  }
  const content = attachmentContent(fields.content);
  if (!content) {
    return invalidAttachment(
      `Invalid \`${at}.content\`: it must be a base64 string, an array of bytes or a serialised Buffer.`,
    );
  }
  // Whatever the shape (`[]`, `"=="`, an empty Buffer), no bytes is the same mistake as `""`.
  if (content.length === 0)
    return invalidAttachment(`Invalid \`${at}\`: an attachment must have \`content\` or \`path\`.`);

  const filename = optionalText(fields.filename, `${at}.filename`, 255);
  if (filename instanceof Refused) return filename;
  const contentType = optionalText(fields.content_type, `${at}.content_type`, 255);
  if (contentType instanceof Refused) return contentType;
  if (contentType !== null && !CONTENT_TYPE.test(contentType)) {
    return invalidAttachment(`Invalid \`${at}.content_type\`: it must be a MIME type such as \`application/pdf\`.`);
  }
  const cidField = present(fields.content_id) ? 'content_id' : 'inline_content_id';
  const rawCid = optionalText(fields[cidField], `${at}.${cidField}`, 127);
  if (rawCid instanceof Refused) return rawCid;
  const contentId = rawCid === null ? null : rawCid.replace(/^<(.*)>$/, '$1');
  if (contentId !== null && !/^[\x21-\x3b=\x3f-\x7e]+$/.test(contentId)) {
    return invalidAttachment(
      `Invalid \`${at}.${cidField}\`: it must be printable ASCII without spaces or angle brackets.`,
    );
  }
  return { filename, contentType, contentId, content };
}

/** The three shapes Resend's SDKs send an attachment's `content` in; null when the value is none of them. */
function attachmentContent(value: unknown): Buffer | null {
  if (typeof value === 'string') {
    const compact = value.replace(/\s+/g, '');
    if (!BASE64.test(compact) || compact.length % 4 === 1) return null;
    return Buffer.from(compact, 'base64');
  }
  const bytes = Array.isArray(value)
    ? (value as unknown[])
    : typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer'
      ? (value as { data?: unknown }).data
      : undefined;
  if (!Array.isArray(bytes)) return null;
  const isByte = (b: unknown): b is number => typeof b === 'number' && Number.isInteger(b) && b >= 0 && b <= 255;
  return (bytes as unknown[]).every(isByte) ? Buffer.from(bytes as number[]) : null;
}

function optionalText(value: unknown, field: string, maxLength: number): string | null | Refused {
  if (!present(value)) return null;
  if (typeof value !== 'string' || value === '' || value.length > maxLength || CONTROL.test(value)) {
    return invalidAttachment(
      `Invalid \`${field}\`: it must be a non-empty string of at most ${maxLength} characters without line breaks.`,
    );
  }
  return value;
}

function parseTags(value: unknown): { name: string; value: string }[] | Refused {
  if (!present(value)) return [];
  if (!Array.isArray(value)) return invalid('Invalid `tags` field: it must be an array of `{name, value}` objects.');
  if (value.length > MAX_TAGS) return invalid(`Invalid \`tags\` field: at most ${MAX_TAGS} tags are allowed.`);
  const names = new Set<string>();
  const tags: { name: string; value: string }[] = [];
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    const tag = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const { name, value: tagValue } = tag;
    if (typeof name !== 'string' || typeof tagValue !== 'string') {
      return invalid(`Invalid tag at \`tags[${index}]\`: it must have a string \`name\` and \`value\`.`);
    }
    for (const text of [name, tagValue]) {
      if (!TAG_TEXT.test(text) || text.length > MAX_TAG_LENGTH) {
        return invalid(
          `Invalid tag ${JSON.stringify(name)}: names and values must be 1 to ${MAX_TAG_LENGTH} ASCII letters, numbers, underscores or dashes.`,
        );
      }
    }
    // Webhook payloads carry tags as an object keyed by name, so a second tag of one name would be lost.
    if (names.has(name)) return invalid(`Invalid tag ${JSON.stringify(name)}: tag names must be unique.`);
    names.add(name);
    tags.push({ name, value: tagValue });
  }
  return tags;
}

function optionalScheduledAt(value: unknown, now: Date): Date | null | Refused {
  if (!present(value)) return null;
  if (typeof value !== 'string') return invalid('Invalid `scheduled_at` field: it must be a string.');
  const parsed = parseScheduledAt(value, now);
  return parsed.ok ? parsed.date : invalid(parsed.refusal.message);
}

function parseTopicId(value: unknown): string | null | Refused {
  if (!present(value)) return null;
  if (typeof value !== 'string' || !isUuid(value)) return invalidParameter('The `topic_id` must be a valid UUID.');
  return value;
}
