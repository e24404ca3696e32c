/** Keys whose values never reach a stored request log. */
const SECRET_KEYS = new Set([
  'token',
  'password',
  'secret',
  'signing_secret',
  'api_key',
  'private_key',
  'authorization',
  'dkim_private_key',
]);

const MAX_STRING = 4096;
const MAX_DEPTH = 8;
const MAX_ITEMS = 100;
/** Serialised size above which a stored body is replaced by a marker. */
export const MAX_LOGGED_BYTES = 64 * 1024;

// jsonb refuses NUL and lone surrogates; one such string must not stop the log writer.
function storable(s: string): string {
  return s.replaceAll('\u0000', '').toWellFormed();
}

/**
 * A copy of a request or response body fit for the request log: secrets replaced, attachment contents
 * and long strings cut, deep or wide structures bounded.
 */
export function scrubBody(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === 'string')
    return storable(value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…[truncated]` : value);
  if (typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[truncated]';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((item) => scrubBody(item, depth + 1));
    if (value.length > MAX_ITEMS) items.push(`[${value.length - MAX_ITEMS} more]`);
    return items;
  }
  const out: Record<string, unknown> = {};
  const entries = Object.entries(value);
  for (const [rawKey, field] of entries.slice(0, MAX_ITEMS)) {
    const key = storable(rawKey);
    const lower = key.toLowerCase();
    if (SECRET_KEYS.has(lower)) out[key] = '[redacted]';
    else if (lower === 'content' && depth > 0) out[key] = '[omitted]';
    else out[key] = scrubBody(field, depth + 1);
  }
  if (entries.length > MAX_ITEMS) out['[truncated]'] = `${entries.length - MAX_ITEMS} more keys`;
  return out;
}

/** The scrubbed body as JSON for a jsonb column: null for non-objects, a marker past MAX_LOGGED_BYTES. */
export function loggableJson(value: unknown): string | null {
  const scrubbed = scrubBody(value);
  if (scrubbed === null || typeof scrubbed !== 'object') return null;
  const json = JSON.stringify(scrubbed);
  return Buffer.byteLength(json) > MAX_LOGGED_BYTES ? JSON.stringify({ truncated: true }) : json;
}
