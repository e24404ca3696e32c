// A small MIME walker for the reports that come back to return-path domains (RFC 6522 multipart/report:
// RFC 3464 delivery status, RFC 5965 feedback reports). mailparser folds message/delivery-status into the
// text (as of mailparser 3.9), so the tree is walked here: boundaries, part headers, quoted-printable and
// base64 bodies, multipart/mixed wrappers around the report, message/rfc822 and text/rfc822-headers
// originals. Lenient like the MTAs it reads (LF or CRLF, missing closing boundaries), bounded like
// anything that reads what a stranger sent (depth, part count).

/** One header field, its name lower-case, its value unfolded (RFC 5322 §2.2.3) and not decoded. */
export type MimeHeader = { name: string; value: string };

export type MimePart = {
  headers: MimeHeader[];
  /** `type/subtype`, lower-case; `text/plain` when the part says none (RFC 2045 §5.2). */
  contentType: string;
  /** Content-Type parameters, names lower-case. */
  params: Record<string, string>;
  /** The body with its Content-Transfer-Encoding undone (a multipart's is its preamble and parts, raw). */
  body: Buffer;
  /** A multipart's parts; for message/rfc822 (and message/global), the one message it holds. */
  parts: MimePart[];
};

/** How deep parts may nest, and how many a message may have: a report has three or four. */
const MAX_DEPTH = 8;
const MAX_PARTS = 100;

/** Parses a whole message (headers and body) into its tree of parts. */
export function parseMime(raw: Buffer): MimePart {
  const budget = { parts: MAX_PARTS };
  return parseEntity(raw.toString('latin1'), 0, budget);
}

/** The first value of a header (`name` lower-case), or undefined. */
export function headerValue(headers: readonly MimeHeader[], name: string): string | undefined {
  return headers.find((header) => header.name === name)?.value;
}

/** Every value of a header (`name` lower-case), in order. */
export function headerValues(headers: readonly MimeHeader[], name: string): string[] {
  return headers.filter((header) => header.name === name).map((header) => header.value);
}

/**
 * A block of header fields (`Name: value` lines, continuation lines starting with a space or a tab), as
 * a message's header or a delivery-status group has them. Lines that are not a field are skipped.
 */
export function parseHeaderBlock(text: string): MimeHeader[] {
  const headers: MimeHeader[] = [];
  for (const line of text.split(/\r?\n/)) {
    const last = headers.at(-1);
    if (/^[ \t]/.test(line)) {
      if (last) last.value = `${last.value} ${line.trim()}`.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!/^[\x21-\x39\x3b-\x7e]+$/.test(name)) continue;
    headers.push({ name, value: line.slice(colon + 1).trim() });
  }
  return headers;
}

/** A part's body as text, in the charset its Content-Type names (UTF-8 when none or unknown). */
export function partText(part: MimePart): string {
  return decodeCharset(part.body, part.params.charset);
}

/**
 * Decodes RFC 2047 encoded words (`=?UTF-8?Q?...?=`, `=?iso-8859-1?B?...?=`) in a header value; the
 * whitespace between two adjacent encoded words goes (§6.2).
 */
export function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?\s]+\?[bq]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[bq]\?[^?\s]*\?=)/gi, '$1')
    .replace(
      /=\?([^?\s*]+)(?:\*[^?\s]*)?\?([bq])\?([^?\s]*)\?=/gi,
      (word: string, charset: string, encoding: string, text: string) => {
        const bytes =
          encoding.toLowerCase() === 'b'
            ? Buffer.from(text, 'base64')
            : decodeQuotedPrintable(text.replaceAll('_', ' '));
        return decodeCharset(bytes, charset);
      },
    );
}

/** The parts of a tree, depth first (the root first), without entering the messages that parts hold. */
export function walkParts(root: MimePart): MimePart[] {
  const out: MimePart[] = [];
  const visit = (part: MimePart) => {
    out.push(part);
    if (part.contentType.startsWith('multipart/')) part.parts.forEach(visit);
  };
  visit(root);
  return out;
}

function parseEntity(text: string, depth: number, budget: { parts: number }): MimePart {
  budget.parts--;
  const { head, body } = splitHead(text);
  // Header values as UTF-8 (RFC 6532 allows it; ASCII, the usual case, is unchanged).
  const headers = parseHeaderBlock(head).map(({ name, value }) => ({
    name,
    value: decodeCharset(Buffer.from(value, 'latin1'), 'utf-8'),
  }));
  const { type, params } = parseContentType(headerValue(headers, 'content-type'));
  const part: MimePart = { headers, contentType: type, params, body: Buffer.alloc(0), parts: [] };
  const nested = depth < MAX_DEPTH && budget.parts > 0;

  if (type.startsWith('multipart/') && params.boundary) {
    part.body = Buffer.from(body, 'latin1');
    if (nested) {
      const children = splitMultipart(body, params.boundary);
      for (const child of children) {
        if (budget.parts <= 0) break;
        part.parts.push(parseEntity(child, depth + 1, budget));
      }
      // In multipart/digest a part without a Content-Type is a message (RFC 2046 §5.1.5).
      if (type === 'multipart/digest') {
        for (const child of part.parts) {
          if (!headerValue(child.headers, 'content-type')) child.contentType = 'message/rfc822';
        }
      }
    }
    return part;
  }
  part.body = decodeTransfer(body, headerValue(headers, 'content-transfer-encoding'));
  if ((type === 'message/rfc822' || type === 'message/global') && nested) {
    part.parts.push(parseEntity(part.body.toString('latin1'), depth + 1, budget));
  }
  return part;
}

/** Header block and body of an entity, split at the first empty line (LF or CRLF). */
function splitHead(text: string): { head: string; body: string } {
  if (/^\r?\n/.test(text)) return { head: '', body: text.replace(/^\r?\n/, '') };
  const match = /\r?\n\r?\n/.exec(text);
  if (!match) return { head: text, body: '' };
  return { head: text.slice(0, match.index), body: text.slice(match.index + match[0].length) };
}

/** The parts between `--boundary` lines, up to `--boundary--` (or the end, when an MTA forgot it). */
function splitMultipart(body: string, boundary: string): string[] {
  const parts: string[] = [];
  const delimiter = `--${boundary}`;
  const lines = body.split(/(?<=\n)/);
  let current: string[] | undefined;
  for (const line of lines) {
    const bare = line.replace(/\r?\n$/, '');
    if (bare.startsWith(delimiter) && /^\s*(?:--\s*)?$/.test(bare.slice(delimiter.length))) {
      if (current) parts.push(withoutLastLineEnd(current.join('')));
      if (bare.slice(delimiter.length).trimStart().startsWith('--')) return parts;
      current = [];
      continue;
    }
    current?.push(line);
  }
  if (current && current.length > 0) parts.push(withoutLastLineEnd(current.join('')));
  return parts;
}

/** The line end before a boundary belongs to the boundary (RFC 2046 §5.1.1). */
function withoutLastLineEnd(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/** `type/subtype` (lower-case) and parameters of a Content-Type value; `text/plain` when absent or garbled. */
export function parseContentType(value: string | undefined): { type: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  if (!value) return { type: 'text/plain', params };
  const [first = '', ...rest] = splitParams(value);
  const type = first.trim().toLowerCase();
  for (const param of rest) {
    const eq = param.indexOf('=');
    if (eq <= 0) continue;
    const name = param.slice(0, eq).trim().toLowerCase();
    let paramValue = param.slice(eq + 1).trim();
    if (paramValue.startsWith('"') && paramValue.endsWith('"') && paramValue.length >= 2) {
      paramValue = paramValue.slice(1, -1).replace(/\\(.)/g, '$1');
    }
    if (!(name in params)) params[name] = paramValue;
  }
  return { type: /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : 'text/plain', params };
}

/** Splits at the semicolons outside quoted strings. */
function splitParams(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (char === '\\' && quoted) {
      current += char + (value[i + 1] ?? '');
      i++;
    } else if (char === '"') {
      quoted = !quoted;
      current += char;
    } else if (char === ';' && !quoted) {
      out.push(current);
      current = '';
    } else current += char;
  }
  out.push(current);
  return out;
}

function decodeTransfer(body: string, encoding: string | undefined): Buffer {
  const name = encoding?.trim().toLowerCase();
  if (name === 'base64') return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (name === 'quoted-printable') return decodeQuotedPrintable(body);
  // 7bit, 8bit, binary, and whatever an MTA made up: the bytes as they are.
  return Buffer.from(body, 'latin1');
}

/** RFC 2045 §6.7: `=XX` octets, soft line breaks (`=` at a line's end); a malformed `=` is kept as is. */
function decodeQuotedPrintable(text: string): Buffer {
  const unfolded = text.replace(/[ \t]*=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < unfolded.length; i++) {
    const char = unfolded.charCodeAt(i);
    if (char === 0x3d && /^[0-9A-Fa-f]{2}$/.test(unfolded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(unfolded.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(char & 0xff);
  }
  return Buffer.from(bytes);
}

/**
 * Bytes as text in a charset (UTF-8 when unknown), without NUL characters: what is read here ends up in
 * Postgres text and jsonb, which refuse them.
 */
function decodeCharset(bytes: Buffer, charset: string | undefined): string {
  const label = (charset ?? 'utf-8').trim().toLowerCase();
  let text: string;
  try {
    text = new TextDecoder(label === 'us-ascii' || label === 'ascii' ? 'utf-8' : label).decode(bytes);
  } catch {
    text = new TextDecoder('utf-8').decode(bytes);
  }
  return text.replaceAll('\u0000', '');
}

/** What a report is, by its machine-readable part. */
export type ReportKind = 'delivery-status' | 'feedback-report';

/** The parts of an RFC 6522 report that matter here. */
export type Report = {
  kind: ReportKind;
  /** The machine-readable part's text (RFC 3464 or RFC 5965 fields). */
  fields: string;
  /** The headers of the original message (its `message/rfc822` copy or its `text/rfc822-headers`), if included. */
  original: MimeHeader[] | undefined;
};

const STATUS_TYPES: Record<string, ReportKind> = {
  'message/delivery-status': 'delivery-status',
  // RFC 6533: the same fields in UTF-8, for SMTPUTF8 mail.
  'message/global-delivery-status': 'delivery-status',
  'message/feedback-report': 'feedback-report',
};

/**
 * The report in a message: the first multipart/report's status part and original (the report may sit in a
 * multipart/mixed wrapper), or, for a report without that container, the first status part anywhere and
 * the first original beside it. Undefined when the message holds no status part at all (a non-RFC bounce,
 * an auto-reply, anything else).
 */
export function findReport(root: MimePart): Report | undefined {
  const parts = walkParts(root);
  const container = parts.find((part) => part.contentType === 'multipart/report');
  const scope = container ? container.parts : parts;
  const status = scope.find((part) => part.contentType in STATUS_TYPES);
  if (!status) return undefined;
  return { kind: STATUS_TYPES[status.contentType]!, fields: partText(status), original: originalHeaders(scope) };
}

/** The first text/plain part outside any included message: a non-RFC bounce's explanation. */
export function firstText(root: MimePart): string {
  const text = walkParts(root).find((part) => part.contentType === 'text/plain');
  return text ? partText(text) : '';
}

function originalHeaders(parts: readonly MimePart[]): MimeHeader[] | undefined {
  for (const part of parts) {
    if (part.contentType === 'message/rfc822' || part.contentType === 'message/global') return part.parts[0]?.headers;
    if (part.contentType === 'text/rfc822-headers' || part.contentType === 'message/global-headers') {
      return parseHeaderBlock(splitHead(partText(part)).head);
    }
  }
  return undefined;
}
