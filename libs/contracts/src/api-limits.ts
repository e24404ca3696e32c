// Limits of the public API that the gateway and the owning services both enforce.

/** How long an `Idempotency-Key` holds: the same key and body within it get the stored answer (24 hours). */
export const IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * POST /emails with attachments as byte arrays: the official Node SDK sends a Buffer as
 * `{"type":"Buffer","data":[…]}`, about 3.6 JSON bytes per byte, so the reference's 40 MB of attachments
 * after base64 (30 MB of bytes) take up to 120 MB of JSON. The gateway and the sender both allow it, two
 * such bodies at a time per process (the shape of the platform's `LargeBody`).
 */
/** The CSV file of a contact import (POST /contacts/imports, multipart/form-data): at most 50 MB. */
export const CONTACT_IMPORT_FILE_LIMIT_BYTES = 50 * 1024 * 1024;

/** The whole multipart body of a contact import: the file and room for the form's other fields. */
export const CONTACT_IMPORT_BODY_LIMIT_BYTES = CONTACT_IMPORT_FILE_LIMIT_BYTES + 1024 * 1024;

export const SEND_EMAIL_BODY = {
  method: 'POST',
  path: '/emails',
  limitBytes: 128 * 1024 * 1024,
  maxConcurrent: 2,
} as const;

/**
 * POST /emails with `Content-Type: message/rfc822` (what the SMTP relay submits): the message's raw bytes,
 * at most 40 MB (the reference's limit on an email with its attachments after encoding), its envelope in
 * the Postline-Envelope-* headers. Read whole by the gateway (the idempotency hash covers the bytes) and by
 * the sender: a body that declares at most `unslottedBytes` at once, a larger one (or one of unknown
 * length) `maxConcurrent` at a time per process, so that large messages cannot exhaust memory while the
 * usual small ones never wait behind them.
 */
export const RAW_EMAIL_BODY = {
  method: 'POST',
  path: '/emails',
  type: 'message/rfc822',
  limitBytes: 40 * 1024 * 1024,
  maxConcurrent: 4,
  unslottedBytes: 1024 * 1024,
  /** The 413's message past `limitBytes`, the same from the gateway and the sender. */
  tooLargeMessage: 'The request body is too large: a raw email may be at most 40 MB.',
} as const;

/** Whether a raw email's body must wait for one of RAW_EMAIL_BODY's slots (its declared length, if any). */
export function rawBodyNeedsSlot(contentLength: string | undefined): boolean {
  const declared = contentLength === undefined ? Number.NaN : Number(contentLength);
  return !(Number.isFinite(declared) && declared <= RAW_EMAIL_BODY.unslottedBytes);
}

/** The envelope of a raw email: MAIL FROM (may be empty) and the RCPT TO addresses, comma-separated. */
export const ENVELOPE_FROM_HEADER = 'postline-envelope-from';
export const ENVELOPE_TO_HEADER = 'postline-envelope-to';

/** Headers of a raw email meant for Postline only, removed before it is delivered (with Bcc). */
export const RELAY_ONLY_HEADERS = [
  'x-postline-tags',
  'x-resend-tags',
  'resend-idempotency-key',
  'postline-idempotency-key',
] as const;
