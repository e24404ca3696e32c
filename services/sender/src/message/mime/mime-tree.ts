// The one file that uses nodemailer's internals, the modules that are not its public API (MailComposer and
// SMTPConnection are): `lib/mime-node` (the MIME tree MailComposer compiles to), `lib/qp` and `lib/base64`
// (its transfer encoders) and `lib/mime-funcs` (its content-type table). mime-tree.test.ts pins the bytes
// written through them, so an upgrade of nodemailer that changes them fails there.
import type { Transform, TransformCallback } from 'node:stream';
import * as base64 from 'nodemailer/lib/base64';
import { detectExtension, detectMimeType } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import * as qp from 'nodemailer/lib/qp';

/**
 * nodemailer normalizes a header name with a chain of regular expressions at every setHeader, getHeader and
 * header line it writes, about 20 times per message. The result depends on the name alone, so each name's
 * result is kept (bounded: custom header names come from customers). Installed once, when this module loads,
 * for every MIME tree of the process.
 */
type Normalizing = { _normalizeHeaderKey: (this: unknown, key: unknown) => string };
const proto = MimeNode.prototype as unknown as Normalizing;
const normalizeHeaderKey = proto._normalizeHeaderKey;
const normalizedKeys = new Map<string, string>();
proto._normalizeHeaderKey = function memoized(this: unknown, key: unknown): string {
  if (typeof key !== 'string') return normalizeHeaderKey.call(this, key);
  let normalized = normalizedKeys.get(key);
  if (normalized === undefined) {
    normalized = normalizeHeaderKey.call(this, key);
    if (normalizedKeys.size >= 1000) normalizedKeys.clear();
    normalizedKeys.set(key, normalized);
  }
  return normalized;
};

/** nodemailer's content type for a file name (`application/pdf` for `a.pdf`), as it guesses one for a part. */
export function mimeTypeOf(filename: string): string {
  return detectMimeType(filename);
}

/** nodemailer's file extension for a content type (`pdf` for `application/pdf`). */
export function extensionOf(contentType: string): string {
  return detectExtension(contentType);
}

/**
 * Writes a compiled nodemailer MIME tree out in one synchronous pass, for a tree whose every part is in
 * memory (a string or a Buffer); returns undefined for any other tree, which `node.build()` then writes.
 *
 * The output is the bytes `node.build()` gives, before its line-ending stage: the same header lines (each
 * node's own `buildHeaders`), the same transfer encoding per part (`getTransferEncoding`, with nodemailer's
 * quoted-printable and base64 encoders, fed the part's whole content as build() feeds it), the same
 * boundaries, and a final line break. `build()` gets there through a stream pipeline per part (a
 * PassThrough, an encoder, pipe, end-of-stream callbacks and a setImmediate between parts), which costs
 * far more than writing the parts out. The differential test holds the two to the same bytes over a corpus.
 */
export function buildMime(root: MimeNode): Buffer | undefined {
  if (!inMemory(root)) return undefined;
  const parts: Buffer[] = [];
  write(root, parts);
  let raw = Buffer.concat(parts);
  // As build()'s LastNewline stage: the message ends with a line break.
  const last = raw.at(-1);
  if (last !== 0x0a) raw = Buffer.concat([raw, Buffer.from(last === 0x0d ? '\n' : '\r\n')]);
  return raw;
}

/** Node fields that build() reads but the type declarations leave out. */
type Internal = { _raw?: unknown; multipart?: string | false; boundary?: string | false };

function inMemory(node: MimeNode): boolean {
  const raw = (node as unknown as Internal)._raw;
  if (raw !== undefined && raw !== false) return false;
  const { content } = node;
  if (content && typeof content !== 'string' && !Buffer.isBuffer(content)) return false;
  return node.childNodes.every(inMemory);
}

/**
 * Runs one of nodemailer's encoder streams over a whole content synchronously: its transform and flush
 * steps call back at once, and what they push waits in its read buffer, read here in one piece. The
 * output is exactly the stream's (the quoted-printable encoder, for one, holds back whitespace at the end
 * of its input and wraps line by line, which its plain `encode` and `wrap` functions do not).
 */
function encodeWhole(encoder: Transform, bytes: Buffer): Buffer {
  const done: TransformCallback = (err) => {
    if (err) throw err;
  };
  if (!encoder._flush) throw new Error('encoder has no flush step');
  encoder._transform(bytes, 'buffer' as BufferEncoding, done);
  encoder._flush(done);
  return (encoder.read() as Buffer | null) ?? Buffer.alloc(0);
}

/** One node as MimeNode.stream writes it: headers, encoded content, then the child parts between boundaries. */
function write(node: MimeNode, parts: Buffer[]): void {
  const transferEncoding = node.getTransferEncoding();
  parts.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  const content = node.content as string | Buffer | undefined;
  if (content) {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    if (transferEncoding === 'base64') parts.push(encodeWhole(new base64.Encoder(), bytes));
    // Outside text/* a lone CR or LF is data, which the encoder then keeps from becoming a line break.
    else if (transferEncoding === 'quoted-printable')
      parts.push(encodeWhole(new qp.Encoder({ binary: !/^text\//i.test(node.contentType ?? '') }), bytes));
    else parts.push(bytes);
  }
  const { multipart, boundary } = node as unknown as Internal;
  if (!multipart) return;
  node.childNodes.forEach((child, index) => {
    parts.push(Buffer.from(`${index > 0 ? '\r\n' : ''}--${String(boundary)}\r\n`));
    write(child, parts);
  });
  parts.push(Buffer.from(`\r\n--${String(boundary)}--\r\n`));
}
