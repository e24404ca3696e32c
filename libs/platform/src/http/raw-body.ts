import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors/errors.ts';

/** How large a raw body may be, and what the 413 past it says. */
export type RawBodyLimit = { limitBytes: number; tooLargeMessage: string };

/**
 * The 413 of a body over its limit. The connection is closed after it: the rest of the body is never read,
 * so the connection cannot carry another request.
 */
export function rawBodyTooLarge(limit: RawBodyLimit): ApiError {
  return new ApiError(413, 'validation_error', limit.tooLargeMessage, { connection: 'close' });
}

/** Whether the request declares a Content-Length over the limit (refuse it before waiting for anything). */
export function declaresTooLarge(req: IncomingMessage, limit: RawBodyLimit): boolean {
  const length = req.headers['content-length'];
  return length !== undefined && Number(length) > limit.limitBytes;
}

/**
 * A request's body read whole into memory as it came (no parsing), at most `limitBytes`: a declared length
 * over it, or more bytes than it, throws the 413 of `rawBodyTooLarge`.
 *
 * @example
 * const raw = await readRawBody(req, { limitBytes: 40 * 1024 * 1024, tooLargeMessage: 'The request body is too large.' });
 */
export async function readRawBody(req: IncomingMessage, limit: RawBodyLimit): Promise<Buffer> {
  if (declaresTooLarge(req, limit)) throw rawBodyTooLarge(limit);
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > limit.limitBytes) throw rawBodyTooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes);
}
