import { IDEMPOTENCY_KEY_LIFETIME_MS } from '@postline/contracts';
import { createHash } from 'node:crypto';
import { sha256Hex } from '@postline/platform/pure';

/** How long a claimed key is kept, in the seconds the claim query takes. */
export const IDEMPOTENCY_TTL_SECONDS = IDEMPOTENCY_KEY_LIFETIME_MS / 1000;

/** The longest the gateway waits for an owner's answer (headers, and between body chunks). */
export const FORWARD_TIMEOUT_MS = 30_000;

/**
 * How long a key in flight is held without its gateway renewing the claim. The gateway renews the claims of
 * its requests in flight every fifth of it (createIdempotencyLeases), so a claim whose lease ran out belongs
 * to a gateway that died (or stalled for seconds): the client's retry takes the key over. That is safe even
 * when the first request is still alive: the owner deduplicates on the key and acts once; only the first
 * gateway's stored answer is lost. Before that, a retry is answered 409 concurrent_idempotent_requests.
 */
export const IDEMPOTENCY_LEASE_MS = 5_000;

/**
 * The longest a gateway keeps a claim fresh: past any forward (its headers and its body each time out at
 * FORWARD_TIMEOUT_MS). A request that never settled by then (a bug) lets its key go with its lease.
 */
export const IDEMPOTENCY_LEASE_MAX_HELD_MS = 2 * FORWARD_TIMEOUT_MS + 15_000;

/** JSON with object keys sorted, so that the same body sent with another key order hashes the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    // An attachment's bytes can be 30 million numbers: one string for them all, not one each.
    if (value.every((item) => typeof item === 'number')) return JSON.stringify(value);
    return `[${value.map(canonicalJson).join(',')}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, field]) => field !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`).join(',')}}`;
}

/**
 * What makes two requests the same for an idempotency key: method, path, body and, for a batch, its
 * validation mode (`permissive` answers differently from the default `strict`).
 */
export function requestHash(method: string, path: string, body: unknown, batchMode?: string): string {
  const mode = batchMode?.toLowerCase() === 'permissive' ? ' permissive' : '';
  return sha256Hex(`${method.toUpperCase()} ${path}${mode}\n${canonicalJson(body)}`);
}

/**
 * The same for a raw email (message/rfc822): method, path, its envelope headers and its bytes as sent
 * (hashed as they are, never turned into a string or JSON).
 */
export function rawRequestHash(
  method: string,
  path: string,
  envelope: { from: string; to: string },
  bytes: Buffer,
): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${path} message/rfc822\n${JSON.stringify([envelope.from, envelope.to])}\n`)
    .update(bytes)
    .digest('hex');
}

/** 1–256 characters, as the reference allows. */
export function validIdempotencyKey(key: string): boolean {
  return key.length >= 1 && key.length <= 256;
}
