import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks: 24–64 bytes). */
export function newSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the secret's base64-decoded bytes, as
 * Standard Webhooks (and Svix) verify it. `timestamp` is Unix seconds.
 */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

// Preparing an HMAC key from raw bytes costs as much as the HMAC of a small body; secrets are reused.
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64'));
    if (keys.size >= 10_000) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** The three headers of one delivery, under both their Standard Webhooks and Svix names. */
export function signedHeaders(opts: {
  id: string;
  timestamp: number;
  body: string;
  secrets: readonly string[];
}): Record<string, string> {
  const value = opts.secrets.map((s) => signature(s, opts.id, opts.timestamp, opts.body)).join(' ');
  const timestamp = String(opts.timestamp);
  return {
    'webhook-id': opts.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': value,
    'svix-id': opts.id,
    'svix-timestamp': timestamp,
    'svix-signature': value,
  };
}
