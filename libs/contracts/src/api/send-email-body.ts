import { z } from 'zod';

// The body of POST /emails (and each item of /emails/batch): the schema the sender parses it with, so that
// every check it documents is the one made, with Resend's messages. What a schema cannot say stays in the
// sender, after this parse: an address's grammar, the headers Postline writes itself, the content's bytes
// and their total size, the time `scheduled_at` names, and the checks that need two fields.

/** Line breaks, NUL and the other C0 controls (tab excepted) and DEL: header injection and smuggling. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
export const CONTROL_CHARACTERS = /[\x00-\x08\x0a-\x1f\x7f]/;

export const MAX_RECIPIENTS_PER_FIELD = 50;
export const MAX_TAGS = 75;
export const MAX_TAG_LENGTH = 256;
export const MAX_BATCH_EMAILS = 100;
/** Attachments' total size counted as base64, as the reference states it ("≤40 MB after base64"). */
export const MAX_ATTACHMENTS_BASE64_BYTES = 40 * 1024 * 1024;

export const FROM_FORMAT =
  'The email address needs to follow the `email@example.com` or `Name <email@example.com>` format';
/** RFC 5322 field name: printable ASCII except the colon. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const TAG_TEXT = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_TAG_LENGTH}}$`);
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const CONTENT_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:\\s*;.*)?$`);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** A Content-ID without its angle brackets: printable ASCII, no spaces or brackets. */
const CONTENT_ID = /^[\x21-\x3b=\x3f-\x7e]+$/;

type Path = readonly PropertyKey[];

/** `attachments[2]`: the attachment an issue's path is in. */
function attachmentAt(path: Path | undefined): string {
  const at = (path ?? []).indexOf('attachments');
  return `attachments[${String((path ?? [])[at + 1] ?? 0)}]`;
}

/** The last key of an issue's path: the header a value belongs to. */
function lastKey(path: Path | undefined): string {
  return String((path ?? []).at(-1) ?? '');
}

/** A string or a list of addresses; `to` needs at least one. */
function recipients(field: string, required: boolean) {
  const format = `Invalid \`${field}\` field. ${FROM_FORMAT}.`;
  const list = z
    .array(z.string({ error: format }))
    .max(
      MAX_RECIPIENTS_PER_FIELD,
      `Invalid \`${field}\` field: at most ${MAX_RECIPIENTS_PER_FIELD} addresses are allowed.`,
    );
  return z.union([z.string().min(1, format), required ? list.min(1) : list], {
    error: `Invalid \`${field}\` field: it must be a string or an array of strings.`,
  });
}

function content(field: 'html' | 'text') {
  return z
    .string({ error: `Invalid \`${field}\` field: it must be a string.` })
    .refine((value) => !value.includes('\0'), `Invalid \`${field}\` field: it must not contain NUL characters.`)
    .nullish();
}

/** An attachment's optional text field: non-empty, at most `max` characters, one line. */
function attachmentText(field: string, max: number) {
  const message = (issue: { path?: Path }) =>
    `Invalid \`${attachmentAt(issue.path)}.${field}\`: it must be a non-empty string of at most ${max} characters without line breaks.`;
  return z
    .string({ error: message })
    .min(1, { error: message })
    .max(max, { error: message })
    .refine((value) => !CONTROL_CHARACTERS.test(value), { error: message });
}

function contentIdField(field: string) {
  return attachmentText(field, 127).refine((value) => CONTENT_ID.test(value.replace(/^<(.*)>$/, '$1')), {
    error: (issue) =>
      `Invalid \`${attachmentAt(issue.path)}.${field}\`: it must be printable ASCII without spaces or angle brackets.`,
  });
}

const contentMessage = (issue: { path?: Path; input?: unknown }) =>
  issue.input === undefined || issue.input === null
    ? `Invalid \`${attachmentAt(issue.path)}\`: an attachment must have \`content\` or \`path\`.`
    : `Invalid \`${attachmentAt(issue.path)}.content\`: it must be a base64 string, an array of bytes or a serialised Buffer.`;
const Byte = z
  .number({ error: contentMessage })
  .int({ error: contentMessage })
  .min(0, { error: contentMessage })
  .max(255, {
    error: contentMessage,
  });
const Bytes = z.array(Byte, { error: contentMessage });

const Attachment = z.object(
  {
    path: z
      .null({
        error: (issue) =>
          `Invalid \`${attachmentAt(issue.path)}\`: attachments by remote \`path\` are not supported yet; send the file as base64 \`content\`.`,
      })
      .optional()
      .describe('Not supported yet (Resend fetches the content from this URL): send `content`.'),
    content: z
      .union(
        [
          z
            .string()
            .refine(
              (value) => {
                const compact = value.replace(/\s+/g, '');
                return BASE64.test(compact) && compact.length % 4 !== 1;
              },
              { error: contentMessage },
            )
            .describe('Base64.'),
          Bytes.describe('The bytes.'),
          z
            .object({ type: z.literal('Buffer', { error: contentMessage }), data: Bytes }, { error: contentMessage })
            .describe('A serialised Node.js Buffer.'),
        ],
        { error: contentMessage },
      )
      .describe('The content: base64, or its bytes.'),
    filename: attachmentText('filename', 255).nullish(),
    content_type: attachmentText('content_type', 255)
      .refine((value) => CONTENT_TYPE.test(value), {
        error: (issue) =>
          `Invalid \`${attachmentAt(issue.path)}.content_type\`: it must be a MIME type such as \`application/pdf\`.`,
      })
      .nullish()
      .describe('Derived from the filename when left out.'),
    content_id: contentIdField('content_id')
      .nullish()
      .describe('Makes the attachment inline: the html refers to it as `cid:<content_id>`.'),
    inline_content_id: contentIdField('inline_content_id')
      .nullish()
      .meta({ description: 'The same as `content_id` (used when `content_id` is not given).', deprecated: true }),
  },
  {
    error: (issue) => `Invalid \`${attachmentAt(issue.path)}\`: an attachment must be an object with \`content\`.`,
  },
);

const tagShape = (issue: { path?: Path }) => {
  const path = issue.path ?? [];
  const index = path[path.indexOf('tags') + 1] ?? 0;
  return `Invalid tag at \`tags[${String(index)}]\`: it must have a string \`name\` and \`value\`.`;
};
const Tag = z
  .object({ name: z.string({ error: tagShape }), value: z.string({ error: tagShape }) }, { error: tagShape })
  .refine((tag) => TAG_TEXT.test(tag.name) && TAG_TEXT.test(tag.value), {
    error: (issue) =>
      `Invalid tag ${JSON.stringify((issue.input as { name: string }).name)}: names and values must be 1 to ${MAX_TAG_LENGTH} ASCII letters, numbers, underscores or dashes.`,
  });

/**
 * POST /emails and each item of /emails/batch. Its fields are in the order they are checked: the first
 * field refused is the answer (the sender names it with Resend's error names). Unknown keys are ignored and
 * null means "not given", as the SDKs send both.
 */
export const SendEmailBody = z.object(
  {
    from: z
      .string({ error: `Invalid \`from\` field. ${FROM_FORMAT}` })
      .min(1)
      .describe('`Name <address>` or a bare address on a verified domain.'),
    to: recipients('to', true).describe(`Up to ${MAX_RECIPIENTS_PER_FIELD} addresses.`),
    cc: recipients('cc', false).nullish(),
    bcc: recipients('bcc', false).nullish(),
    reply_to: recipients('reply_to', false).nullish(),
    subject: z
      .string({ error: 'Invalid `subject` field: it must be a string.' })
      .refine(
        (value) => !CONTROL_CHARACTERS.test(value),
        'Invalid `subject` field: it must not contain line breaks or control characters.',
      )
      .max(998, 'Invalid `subject` field: it must be at most 998 characters.'),
    html: content('html'),
    text: content('text').describe('Generated from `html` when left out; `""` sends no text part.'),
    headers: z
      .record(
        z.string().regex(FIELD_NAME),
        z
          .string({
            error: (issue) => `Invalid value of header ${JSON.stringify(lastKey(issue.path))}: it must be a string.`,
          })
          .refine((value) => !CONTROL_CHARACTERS.test(value), {
            error: (issue) =>
              `Invalid value of header ${JSON.stringify(lastKey(issue.path))}: it must not contain line breaks or control characters.`,
          }),
        {
          // A refused name is reported by the record, as `invalid_key` with the name as its input.
          error: (issue) =>
            issue.code === 'invalid_key'
              ? `Invalid header name ${JSON.stringify(issue.input)}: a header name is printable ASCII without spaces or colons.`
              : 'Invalid `headers` field: it must be an object of header names to string values.',
        },
      )
      .nullish()
      .describe('Custom headers; not those Postline writes (From, To, Subject, Message-ID, DKIM-Signature, …).'),
    attachments: z
      .array(Attachment, { error: 'Invalid `attachments` field: it must be an array.' })
      .nullish()
      .describe('Not in a batch. At most 40 MB in all, counted as base64.'),
    tags: z
      .array(Tag, { error: 'Invalid `tags` field: it must be an array of `{name, value}` objects.' })
      .max(MAX_TAGS, `Invalid \`tags\` field: at most ${MAX_TAGS} tags are allowed.`)
      .nullish()
      .describe('Unique names.'),
    scheduled_at: z
      .string({ error: 'Invalid `scheduled_at` field: it must be a string.' })
      .nullish()
      .describe('ISO 8601, or natural language such as `in 1 hour`.'),
    template: z
      .object({ id: z.string(), variables: z.record(z.string(), z.union([z.string(), z.number()])).nullish() })
      .nullish()
      .describe('A published template, whose content is sent: `html` and `text` are then refused.'),
    topic_id: z.uuid({ error: 'The `topic_id` must be a valid UUID.' }).nullish(),
  },
  { error: 'The email must be a JSON object.' },
);

/** POST /emails/batch. A permissive batch (`x-batch-validation: permissive`) checks each email on its own. */
export const BatchEmailsBody = z
  .array(SendEmailBody, { error: 'The request body must be an array of emails.' })
  .min(1, 'The batch must contain at least one email.')
  .max(MAX_BATCH_EMAILS, `A batch can contain at most ${MAX_BATCH_EMAILS} emails.`);
