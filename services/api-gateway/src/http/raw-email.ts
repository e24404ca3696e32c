import type { Request, RequestHandler, Response } from 'express';
import { ENVELOPE_FROM_HEADER, ENVELOPE_TO_HEADER, RAW_EMAIL_BODY, rawBodyNeedsSlot } from '@postline/contracts';
import { createSlots, declaresTooLarge, rawBodyTooLarge, readRawBody, type RawBodyLimit } from '@postline/platform';
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

/** A raw email's limit; past it a 413, after which the connection is closed (the rest is never read). */
const RAW_EMAIL_LIMIT: RawBodyLimit = RAW_EMAIL_BODY;

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
    if (declaresTooLarge(req, RAW_EMAIL_LIMIT)) throw rawBodyTooLarge(RAW_EMAIL_LIMIT);
    const release = rawBodyNeedsSlot(length) ? await slots.acquire() : () => undefined;
    // Held until the answer is sent or the client goes (`release` acts once): the bytes live that long.
    res.once('finish', release);
    res.once('close', release);
    if (res.closed) return release(); // the client went away while it waited
    const bytes = await readRawBody(req, RAW_EMAIL_LIMIT);
    summary.size = bytes.length;
    (res.locals as RawLocals).rawEmail = {
      bytes,
      envelopeFrom: summary.envelope_from,
      envelopeTo: summary.envelope_to,
    };
    next();
  };
}
