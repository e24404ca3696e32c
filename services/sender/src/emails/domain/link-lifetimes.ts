// A sent email's public links: a share link (`POST /emails/{id}/share`) and the download link of one of its
// attachments (`download_url`), signed and checked by @postline/platform's link signer. Here: how long each
// works, and a share link's `expires_in`.
import type { Refusal } from '../../message/index.ts';

/** How long an attachment's `download_url` works. */
export const DOWNLOAD_LINK_TTL_MS = 3600_000;

/** A share link's life when `expires_in` is not given, and its longest. */
export const MAX_SHARE_TTL_MS = 48 * 3600_000;

const DURATION = /^(\d{1,6})\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)$/i;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };

/** A share link's life in milliseconds, or why `expires_in` is refused. */
export type ParsedShareTtl = { ok: true; ms: number } | { ok: false; refusal: Refusal };

/**
 * A share link's `expires_in` ("10m", "2 hours", "1 day"; seconds, minutes, hours or days) in milliseconds:
 * 48 hours when absent, at most 48 hours; anything else is refused (validation_error).
 */
export function parseShareTtl(value: unknown): ParsedShareTtl {
  if (value === undefined || value === null) return { ok: true, ms: MAX_SHARE_TTL_MS };
  const match = typeof value === 'string' ? DURATION.exec(value.trim()) : null;
  if (!match) return refused('Invalid `expires_in` field: use a duration such as `10m`, `2 hours` or `1 day`.');
  const ms = Number(match[1]) * (UNIT_MS[(match[2] ?? 's').charAt(0).toLowerCase()] ?? 1000);
  if (ms <= 0) return refused('Invalid `expires_in` field: the duration must be more than zero.');
  if (ms > MAX_SHARE_TTL_MS) return refused('Invalid `expires_in` field: a share link lasts at most 48 hours.');
  return { ok: true, ms };
}

function refused(message: string): ParsedShareTtl {
  return { ok: false, refusal: { name: 'validation_error', message } };
}
