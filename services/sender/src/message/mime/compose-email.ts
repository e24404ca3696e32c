// The RFC 5322 message of an email: from its stored row to the bytes DKIM signs, through nodemailer's
// MailComposer (its public API) and mime-tree.ts (the parts of nodemailer that are not).
import { randomUUID } from 'node:crypto';
import type { HtmlToTextOptions } from 'html-to-text';
import MailComposer, { type MailComposerAttachment } from 'nodemailer/lib/mail-composer';
import { loadOnFirstUse } from '@postline/platform/pure';
import type { EmailRow } from '../../db/schema.ts';
import { parseMailbox, type Mailbox } from '../domain/address.ts';
import type { EmailRequest } from '../domain/email-request.ts';
import { buildMime, extensionOf, mimeTypeOf } from './mime-tree.ts';

// html-to-text (with its HTML parser, about 1.5 MB of heap) is loaded when a text part is first generated.
const htmlToText = loadOnFirstUse(() => import('html-to-text'));

/**
 * What goes into the MIME message. No bcc: Bcc recipients are envelope-only and never appear in the
 * headers every recipient sees.
 */
export type ComposeInput = Pick<
  EmailRequest,
  'from' | 'to' | 'cc' | 'replyTo' | 'subject' | 'html' | 'text' | 'headers' | 'attachments'
> & {
  /** With angle brackets: `<id@domain>`. */
  messageId: string;
  date: Date;
  /**
   * The html as the customer wrote it, when `html` has open or click tracking applied: a text part made
   * from the html (`text` null) is made from this one, so that tracking leaves the text part alone.
   */
  untrackedHtml?: string;
};

/** An `email_attachments` row, as much of it as the message needs. */
type StoredAttachment = {
  filename: string | null;
  content_type: string | null;
  content_id: string | null;
  content: Buffer;
};

/** The message input of a stored email and its attachments (in their order). */
export function composeInputOf(email: EmailRow, attachments: readonly StoredAttachment[]): ComposeInput {
  return {
    from: parseMailbox(email.from_header) ?? { name: null, address: email.from_address },
    to: email.to_addresses,
    cc: email.cc_addresses,
    replyTo: email.reply_to,
    subject: email.subject,
    html: email.html,
    text: email.text,
    headers: email.headers as unknown as { name: string; value: string }[],
    attachments: attachments.map((a) => ({
      filename: a.filename,
      contentType: a.content_type,
      contentId: a.content_id,
      content: a.content,
    })),
    messageId: email.message_id,
    date: email.scheduled_at ?? email.created_at,
  };
}

/** Headers RFC 5322 §3.6 (and MIME) allow at most once; a second copy can slip past DKIM (RFC 6376 §5.4.2). */
const SINGLETON_HEADERS = [
  'from',
  'sender',
  'reply-to',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'in-reply-to',
  'references',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
];
const REQUIRED_HEADERS = ['from', 'date', 'message-id', 'mime-version', 'content-type'];
/** RFC 5322 §2.1.1, in octets without the CRLF. */
const MAX_LINE_OCTETS = 998;

const TEXT_OPTIONS: HtmlToTextOptions = {
  wordwrap: 80,
  selectors: [
    // An image's alt text and src (often `cid:`) read as noise in the text part.
    { selector: 'img', format: 'skip' },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
  ],
};

/**
 * Builds the RFC 5322 message, CRLF line endings throughout, ready for DKIM signing. A plain-text part is
 * generated from the html when `text` is null, left out when it is "". Throws a plain Error when the
 * input breaks what parseEmailRequest guarantees or the result breaks a header invariant: a bug, not a
 * customer error.
 */
export async function composeMessage(email: ComposeInput): Promise<Buffer> {
  if (!/^<[^<>\s@]+@[^<>\s@]+>$/.test(email.messageId)) throw new Error(`Invalid Message-ID ${email.messageId}`);
  const html = email.html === null ? undefined : lf(email.html);
  const text = await plainText(email);
  const composer = new MailComposer({
    from: mailbox(email.from),
    to: email.to.map(recipient),
    cc: email.cc.map(recipient),
    replyTo: email.replyTo.map(recipient),
    subject: email.subject,
    messageId: email.messageId,
    date: email.date,
    ...(text === undefined ? {} : { text }),
    ...(html === undefined ? {} : { html }),
    headers: email.headers.map(({ name, value }) => ({ key: name, value })),
    attachments: email.attachments.map(attachment),
    // The random part of every boundary (the root's: boundaries are built from it). Without it the root
    // draws its own with a crypto.randomBytes call (child parts still draw one each, unused); randomUUID
    // draws from a pool Node refills 128 at a time, which is cheaper.
    baseBoundary: randomUUID().replaceAll('-', ''),
    // The content is in memory: never let a value reach for a file or a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
    newline: 'win',
  });
  const mime = composer.compile();
  const raw = toCrlf(buildMime(mime) ?? (await mime.build()));
  checkComposed(raw);
  return raw;
}

/**
 * Throws unless `raw` has CRLF line endings only, no line over 998 octets, each singleton header at most
 * once, the required ones exactly once and no Bcc. Run before signing; the MTA may run it again.
 */
export function checkComposed(raw: Buffer): void {
  const message = raw.toString('latin1');
  if (/\r(?!\n)|(?<!\r)\n/.test(message)) throw new Error('Composed message has a bare CR or LF');
  const end = message.indexOf('\r\n\r\n');
  if (end < 0) throw new Error('Composed message has no header/body separator');
  let start = 0;
  while (start < message.length) {
    const next = message.indexOf('\r\n', start);
    const stop = next < 0 ? message.length : next;
    if (stop - start > MAX_LINE_OCTETS) throw new Error(`Composed message has a line of ${stop - start} octets`);
    start = stop + 2;
  }
  const counts = new Map<string, number>();
  for (const line of message.slice(0, end).split('\r\n')) {
    if (line.startsWith(' ') || line.startsWith('\t')) continue; // a folded continuation
    const colon = line.indexOf(':');
    if (colon < 1) throw new Error(`Composed message has a malformed header line ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, colon).toLowerCase();
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  for (const name of SINGLETON_HEADERS) {
    if ((counts.get(name) ?? 0) > 1) throw new Error(`Composed message repeats the ${name} header`);
  }
  for (const name of REQUIRED_HEADERS) {
    if (counts.get(name) !== 1) throw new Error(`Composed message lacks the ${name} header`);
  }
  if (counts.has('bcc')) throw new Error('Composed message carries a Bcc header');
}

async function plainText(email: ComposeInput): Promise<string | undefined> {
  if (email.text === '') return undefined;
  if (email.text !== null) return lf(email.text);
  const html = email.untrackedHtml ?? email.html;
  if (html === null) return undefined;
  let generated = generatedText.get(html);
  if (generated === undefined) {
    const { convert } = await htmlToText();
    generated = convert(html, TEXT_OPTIONS);
    // html-to-text costs about a millisecond per message; a batch or broadcast repeats one html many times.
    if (generatedText.size >= GENERATED_TEXT_CACHE) generatedText.delete(generatedText.keys().next().value as string);
    generatedText.set(html, generated);
  }
  return generated === '' ? undefined : lf(generated);
}

const GENERATED_TEXT_CACHE = 256;
/** Text generated from html, by html (insertion order: the oldest entry is dropped first). */
const generatedText = new Map<string, string>();

/**
 * Every line break as LF; nodemailer's `newline: 'win'` then writes CRLF. A bare CR would otherwise
 * pass through a 7bit part untouched, and a later hop could read it as a line end.
 */
function lf(value: string): string {
  return value.replace(/\r\n?/g, '\n');
}

function mailbox(box: Mailbox): { name: string; address: string } {
  return { name: box.name ?? '', address: box.address };
}

/** Recipients go to nodemailer as name/address pairs so it encodes them rather than re-parsing a string. */
function recipient(value: string): { name: string; address: string } {
  const box = parseMailbox(value);
  if (!box) throw new Error(`Invalid recipient ${JSON.stringify(value)} reached composeMessage`);
  return mailbox(box);
}

function attachment(item: EmailRequest['attachments'][number], index: number): MailComposerAttachment {
  return {
    content: item.content,
    filename: attachmentFilename(item, index),
    ...(item.contentType === null ? {} : { contentType: item.contentType }),
    ...(item.contentId === null
      ? { contentDisposition: 'attachment' }
      : { cid: item.contentId, contentDisposition: 'inline' }),
  };
}

/**
 * The file name an attachment is sent with: its own, or for an unnamed one `attachment-<n>.<extension of its
 * type>` (nodemailer would invent `attachment-1.*` for an unnamed part of unknown type).
 */
export function attachmentFilename(
  item: { filename: string | null; contentType: string | null },
  index: number,
): string {
  return item.filename ?? `attachment-${index + 1}.${extensionFor(item.contentType)}`;
}

/** The content type an attachment is sent with: its own, or nodemailer's guess from its file name. */
export function attachmentContentType(
  item: { filename: string | null; contentType: string | null },
  index: number,
): string {
  return item.contentType ?? mimeTypeOf(attachmentFilename(item, index));
}

function extensionFor(contentType: string | null): string {
  const extension = contentType === null ? '' : extensionOf(contentType.split(';')[0]?.trim() ?? '');
  return /^[a-z0-9]+$/i.test(extension) ? extension : 'bin';
}

/**
 * Rewrites any bare CR or LF as CRLF; latin1 keeps every byte as one char, so binary survives. A message
 * that has none (every composed one) comes back as it is, without a copy.
 */
export function toCrlf(raw: Buffer): Buffer {
  const message = raw.toString('latin1');
  if (!/\r(?!\n)|(?<!\r)\n/.test(message)) return raw;
  return Buffer.from(message.replace(/\r\n|\r|\n/g, '\r\n'), 'latin1');
}
