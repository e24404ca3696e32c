import { domainToASCII } from 'node:url';
import type { z } from 'zod';
import { ApiRequests, FROM_FORMAT, MAX_ATTACHMENTS_BASE64_BYTES } from '@postline/contracts';
import { parseMailbox, type Mailbox } from './address.ts';
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

export { MAX_RECIPIENTS_PER_FIELD } from '@postline/contracts';

type SendEmailBody = z.infer<typeof ApiRequests.SendEmailBody>;

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

/** The body's fields in the order they are checked: the documented schema's order. */
const FIELD_ORDER: readonly string[] = Object.keys(ApiRequests.SendEmailBody.shape);

/**
 * The body is parsed with the documented schema (ApiRequests.SendEmailBody), whose fields are in the order
 * they are checked; the checks a schema cannot make come in the same order, each after its field. When the
 * schema refuses a field, the checks of the fields before it still come first: the first refusal in that
 * order is the answer.
 */
function emailRequest(body: unknown, options: ParseEmailOptions): EmailRequest | Refused {
  const input = body ?? {};
  const parsed = ApiRequests.SendEmailBody.safeParse(input);
  const refusedAt = parsed.success ? FIELD_ORDER.length : firstRefusedField(parsed.error.issues);
  /** Whether the schema took this field and every one before it (so its value has the schema's type). */
  const took = (field: string) => FIELD_ORDER.indexOf(field) < refusedAt;
  const schemaRefusal = () => refusalOfIssues(parsed.error?.issues ?? [], input);
  // Before the refused field, the values are the schema's; the input itself is kept (transforms change none).
  const fields = (parsed.success ? parsed.data : input) as SendEmailBody;

  if (!took('from')) return schemaRefusal();
  const from = parseMailbox(fields.from);
  if (!from) return invalidParameter(`Invalid \`from\` field. ${FROM_FORMAT}`);
  if (!took('to')) return schemaRefusal();
  const to = recipientsOf(fields.to, 'to');
  if (to instanceof Refused) return to;
  if (!took('cc')) return schemaRefusal();
  const cc = recipientsOf(fields.cc, 'cc');
  if (cc instanceof Refused) return cc;
  if (!took('bcc')) return schemaRefusal();
  const bcc = recipientsOf(fields.bcc, 'bcc');
  if (bcc instanceof Refused) return bcc;
  if (!took('reply_to')) return schemaRefusal();
  const replyTo = recipientsOf(fields.reply_to, 'reply_to');
  if (replyTo instanceof Refused) return replyTo;

  if (!took('text')) return schemaRefusal();
  const html = fields.html ?? null;
  const text = fields.text ?? null;
  if (html === null && (text === null || text === '')) return invalid('Missing `html` or `text` field.');
  const attachmentsGiven = (input as { attachments?: unknown }).attachments;
  if (options.batch && Array.isArray(attachmentsGiven) && attachmentsGiven.length > 0) {
    return invalid('Attachments are not supported in batch emails.');
  }

  if (!took('headers')) return schemaRefusal();
  const headers = checkHeaders(fields.headers ?? {});
  if (headers instanceof Refused) return headers;
  if (!took('attachments')) return schemaRefusal();
  const attachments = decodeAttachments(fields.attachments ?? []);
  if (attachments instanceof Refused) return attachments;
  if (!took('tags')) return schemaRefusal();
  const tags = uniqueTags(fields.tags ?? []);
  if (tags instanceof Refused) return tags;
  if (!took('scheduled_at')) return schemaRefusal();
  const scheduledAt = optionalScheduledAt(fields.scheduled_at, options.now);
  if (scheduledAt instanceof Refused) return scheduledAt;
  if (!parsed.success) return schemaRefusal();

  return {
    from,
    fromDomain: domainToASCII(from.address.slice(from.address.lastIndexOf('@') + 1)),
    fromHeader: parsed.data.from.trim(),
    to,
    cc,
    bcc,
    replyTo,
    subject: parsed.data.subject,
    html,
    text,
    headers,
    attachments,
    tags,
    scheduledAt,
    topicId: parsed.data.topic_id ?? null,
  };
}

/** The position (in FIELD_ORDER) of the first field the schema refused; -1 when it refused the body itself. */
function firstRefusedField(issues: readonly z.core.$ZodIssue[]): number {
  const field = issues[0]?.path[0];
  return typeof field === 'string' ? FIELD_ORDER.indexOf(field) : -1;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The fields a body must have: left out, null or empty, they answer missing_required_field. */
const REQUIRED = new Set(['from', 'to', 'subject']);

/**
 * The refusal of a body the schema refuses, with Resend's error names: the first field refused (the
 * schema's fields are in check order), its own checks (its type, its count) before its items'. A
 * recipients field answers for the form given (a string or a list), not for both.
 */
function refusalOfIssues(issues: readonly z.core.$ZodIssue[], input: unknown): Refused {
  const all = issues.flatMap(ofFormGiven);
  const field = all[0]?.path[0];
  const ofField = all.filter((issue) => issue.path[0] === field);
  const issue = ofField.find((candidate) => candidate.path.length === 1) ?? ofField[0];
  if (issue === undefined || typeof field !== 'string')
    return invalid(issue?.message ?? 'The email must be a JSON object.');
  const value = (input as Record<string, unknown>)[field];
  const empty = !present(value) || value === '' || (Array.isArray(value) && value.length === 0);
  if (issue.path.length === 1 && REQUIRED.has(field) && empty) return missingField(field);
  if (field === 'from' || field === 'topic_id') return invalidParameter(issue.message);
  if (field === 'attachments' && issue.path.length > 1) return invalidAttachment(issue.message);
  return invalid(issue.message);
}

/** A top-level union's issues for the option of the value's form (the others fail on its type alone). */
function ofFormGiven(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || issue.path.length !== 1) return [issue];
  const option = issue.errors.find((errors) => {
    const first = errors[0];
    return first !== undefined && !(first.code === 'invalid_type' && first.path.length === 0);
  });
  return option ? option.map((sub) => ({ ...sub, path: [...issue.path, ...sub.path] })) : [issue];
}

/** Recipients as given (the schema checked their form), each a valid mailbox, trimmed. */
function recipientsOf(value: string | string[] | null | undefined, field: string): string[] | Refused {
  if (!present(value)) return [];
  const list = typeof value === 'string' ? [value] : (value as string[]);
  const recipients: string[] = [];
  for (const item of list) {
    if (!parseMailbox(item)) return invalid(`Invalid \`${field}\` field. ${FROM_FORMAT}.`);
    recipients.push(item.trim());
  }
  return recipients;
}

/** The headers in the order given: none that Postline writes, no name twice, each line at most 998 characters. */
function checkHeaders(value: Record<string, string>): { name: string; value: string }[] | Refused {
  const seen = new Set<string>();
  const headers: { name: string; value: string }[] = [];
  for (const [name, headerValue] of Object.entries(value)) {
    const label = JSON.stringify(name);
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
    // RFC 5322 §2.1.1: a line is at most 998 characters, and a value without spaces cannot be folded.
    if (name.length + 2 + headerValue.length > 998) {
      return invalid(`Invalid value of header ${label}: a header is at most 998 characters.`);
    }
    headers.push({ name, value: headerValue });
  }
  return headers;
}

type AttachmentInput = NonNullable<SendEmailBody['attachments']>[number];

/** The attachments' bytes: none empty, at most MAX_ATTACHMENTS_BASE64_BYTES in all, counted as base64. */
function decodeAttachments(value: readonly AttachmentInput[]): EmailAttachment[] | Refused {
  let base64Bytes = 0;
  const parsed: EmailAttachment[] = [];
  for (const [index, fields] of value.entries()) {
    const content = attachmentContent(fields.content);
    // Whatever the shape (`[]`, `"=="`, an empty Buffer), no bytes is the same mistake as `""`.
    if (content.length === 0) {
      return invalidAttachment(`Invalid \`attachments[${index}]\`: an attachment must have \`content\` or \`path\`.`);
    }
    base64Bytes += Math.ceil(content.length / 3) * 4;
    const contentId = fields.content_id ?? fields.inline_content_id ?? null;
    parsed.push({
      filename: fields.filename ?? null,
      contentType: fields.content_type ?? null,
      contentId: contentId === null ? null : contentId.replace(/^<(.*)>$/, '$1'),
      content,
    });
  }
  if (base64Bytes > MAX_ATTACHMENTS_BASE64_BYTES) {
    return invalid('Attachments exceed the 40 MB limit per email (counted after base64 encoding).');
  }
  return parsed;
}

/** The bytes of the three shapes Resend's SDKs send an attachment's `content` in (the schema checked which). */
function attachmentContent(value: AttachmentInput['content']): Buffer {
  if (typeof value === 'string') return Buffer.from(value.replace(/\s+/g, ''), 'base64');
  return Buffer.from(Array.isArray(value) ? value : value.data);
}

/** Webhook payloads carry tags as an object keyed by name, so a second tag of one name would be lost. */
function uniqueTags(value: readonly { name: string; value: string }[]): { name: string; value: string }[] | Refused {
  const names = new Set<string>();
  for (const tag of value) {
    if (names.has(tag.name)) return invalid(`Invalid tag ${JSON.stringify(tag.name)}: tag names must be unique.`);
    names.add(tag.name);
  }
  return value.map((tag) => ({ name: tag.name, value: tag.value }));
}

function optionalScheduledAt(value: string | null | undefined, now: Date): Date | null | Refused {
  if (!present(value)) return null;
  const parsed = parseScheduledAt(value as string, now);
  return parsed.ok ? parsed.date : invalid(parsed.refusal.message);
}
