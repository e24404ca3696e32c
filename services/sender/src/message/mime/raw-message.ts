// The bytes of a raw email (POST /emails with message/rfc822, what the SMTP relay submits): its header
// fields as they are written, and the message as Postline delivers it. Only the header section is
// touched; every field kept and the whole body stay byte for byte as the client wrote them (in CRLF).
import { RELAY_ONLY_HEADERS } from '@postline/contracts';
import { toCrlf } from './compose-email.ts';

/** One header field as written: its name, and the whole field (folded lines included, with their CRLFs). */
export type RawHeaderField = { name: string; lowerName: string; bytes: Buffer };

/** A message split into its header fields and its body (after the empty line; empty without one). */
export type RawMessageParts = { fields: RawHeaderField[]; separator: Buffer; body: Buffer };

const CRLF = Buffer.from('\r\n');

/**
 * Splits a message (line endings made CRLF first) into its header fields and body. A line that starts with
 * a space or tab continues the field before it (RFC 5322 §2.2.3); a line without a colon that continues
 * nothing is kept as a field without a name, so nothing the client wrote is lost or reordered.
 */
export function splitRawMessage(raw: Buffer): RawMessageParts {
  const message = toCrlf(raw);
  let headerEnd: number;
  let bodyStart: number;
  if (message.subarray(0, 2).equals(CRLF)) {
    headerEnd = 0;
    bodyStart = 2;
  } else {
    const blank = message.indexOf('\r\n\r\n');
    headerEnd = blank < 0 ? message.length : blank + 2;
    bodyStart = blank < 0 ? message.length : blank + 4;
  }
  const fields: RawHeaderField[] = [];
  let at = 0;
  while (at < headerEnd) {
    const lineEnd = message.indexOf('\r\n', at);
    const next = lineEnd < 0 || lineEnd + 2 > headerEnd ? headerEnd : lineEnd + 2;
    const line = message.subarray(at, next);
    const first = line[0];
    const last = fields.at(-1);
    if ((first === 0x20 || first === 0x09) && last) {
      last.bytes = Buffer.concat([last.bytes, line]);
    } else {
      const colon = line.indexOf(0x3a);
      const name = colon < 0 ? '' : line.subarray(0, colon).toString('latin1').trim();
      fields.push({ name, lowerName: name.toLowerCase(), bytes: line });
    }
    at = next;
  }
  const separator = bodyStart > headerEnd ? message.subarray(headerEnd, bodyStart) : Buffer.alloc(0);
  return { fields, separator, body: message.subarray(bodyStart) };
}

/** Header fields of the client's message that never leave Postline: Bcc (hidden) and the relay-only ones. */
export const REMOVED_HEADERS: ReadonlySet<string> = new Set(['bcc', ...RELAY_ONLY_HEADERS]);

/**
 * The message as it is stored and delivered: the client's, with Bcc and the relay-only headers removed and
 * `added` fields (Message-ID, Date when missing) put in front; CRLF line endings. Made once at accept, so
 * that every attempt sends (and signs) the same bytes.
 */
export function preparedRawMessage(parts: RawMessageParts, added: readonly { name: string; value: string }[]): Buffer {
  const kept = parts.fields.filter((field) => !REMOVED_HEADERS.has(field.lowerName)).map((field) => field.bytes);
  const front = added.map((field) => Buffer.from(`${field.name}: ${field.value}\r\n`, 'utf8'));
  return Buffer.concat([...front, ...kept, parts.separator, parts.body]);
}
