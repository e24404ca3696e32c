import type { Request, RequestHandler, Response } from 'express';
import { ENVELOPE_FROM_HEADER, ENVELOPE_TO_HEADER, RAW_EMAIL_BODY, rawBodyNeedsSlot } from '@postline/contracts';
import { ApiError, createSlots } from '@postline/platform';
import { normalizePath } from '../domain/routes.ts';

/** A raw email (POST /emails, message/rfc822) read whole, with its envelope as the client sent it. */
export type RawEmail = {
  bytes: Buffer;
  /** The Postline-Envelope-From header ('' when absent: an empty MAIL FROM). */
  envelopeFrom: string;
  /** The Postline-Envelope-To header ('' when absent). */
  envelopeTo: string;
};

/** What the request log keeps of a raw email: never the message, only its type, size and envelope. */
export type RawEmailSummary = { content_type: string; size: number | null; envelope_from: string; envelope_to: string };

type RawLocals = { rawEmail?: RawEmail; rawEmailSummary?: RawEmailSummary };

export function rawEmailOf(res: Response): RawEmail | undefined {
  return (res.locals as RawLocals).rawEmail;
}

export function rawEmailSummaryOf(res: Response): RawEmailSummary | undefined {
  return (res.locals as RawLocals).rawEmailSummary;
}

export function isRawEmailRequest(req: Request): boolean {
  return (
    req.method === RAW_EMAIL_BODY.method &&
    normalizePath(req.path) === RAW_EMAIL_BODY.path &&
    req.is(RAW_EMAIL_BODY.type) === RAW_EMAIL_BODY.type
  );
}

/**
 * The 413 of a body over the limit. The connection is closed after it: the rest of the body is never read,
 * so the connection cannot carry another request.
 */
function tooLarge(): ApiError {
  return new ApiError(
    413,
    'validation_error',
    `The request body is too large: a raw email may be at most ${RAW_EMAIL_BODY.limitBytes / 1024 / 1024} MB.`,
    {
      connection: 'close',
    },
  );
}

/**
 * Reads the body of POST /emails with `Content-Type: message/rfc822` (what the SMTP relay submits) into
 * memory, at most RAW_EMAIL_BODY.limitBytes (else 413), large ones a few at a time per process: the
 * idempotency hash covers its bytes, and it is forwarded to the sender as it came. Runs after
 * authentication and the rate limit, so an unauthenticated or limited client's body is never read.
 */
export function rawEmailBody(): RequestHandler {
  const slots = createSlots(RAW_EMAIL_BODY.maxConcurrent);
  return async (req, res, next) => {
    if (!isRawEmailRequest(req)) return next();
    const length = req.header('content-length');
    const summary: RawEmailSummary = {
      content_type: RAW_EMAIL_BODY.type,
      size: length === undefined ? null : Number(length),
      envelope_from: req.header(ENVELOPE_FROM_HEADER) ?? '',
      envelope_to: req.header(ENVELOPE_TO_HEADER) ?? '',
    };
    (res.locals as RawLocals).rawEmailSummary = summary;
    if (length !== undefined && Number(length) > RAW_EMAIL_BODY.limitBytes) throw tooLarge();
    const release = rawBodyNeedsSlot(length) ? await slots.acquire() : () => undefined;
    // Held until the answer is sent or the client goes (`release` acts once): the bytes live that long.
    res.once('finish', release);
    res.once('close', release);
    if (res.closed) return release(); // the client went away while it waited
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > RAW_EMAIL_BODY.limitBytes) throw tooLarge();
      chunks.push(chunk);
    }
    summary.size = bytes;
    (res.locals as RawLocals).rawEmail = {
      bytes: Buffer.concat(chunks, bytes),
      envelopeFrom: summary.envelope_from,
      envelopeTo: summary.envelope_to,
    };
    next();
  };
}
