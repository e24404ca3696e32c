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
