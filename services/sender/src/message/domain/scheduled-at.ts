// `scheduled_at`: when an email (or a broadcast) is sent, given as ISO 8601 or natural language.
// English only, as chrono's own default parser reads (its other locales hold about 3 MB of heap).
import * as chrono from 'chrono-node/en';
import type { Refusal } from './refusal.ts';

export const MAX_SCHEDULE_AHEAD_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * How far in the past `scheduled_at` may be and still be accepted (it is then due at once). Clients
 * compute "now + a few seconds" on their own clock, so a small skew must not fail them; a time further
 * back is almost always a wrong zone or year, and sending at once would surprise more than a 422.
 */
export const SCHEDULE_PAST_TOLERANCE_MS = 60 * 1000;

/** A parsed `scheduled_at`, or why it is refused. */
export type ParsedScheduledAt = { ok: true; date: Date } | { ok: false; refusal: Refusal };

/**
 * Parses `scheduled_at`: ISO 8601 (a time without an offset is UTC) or natural language read by chrono
 * relative to `now` in UTC unless the text names a zone ("Friday at 3pm ET"). The whole text must parse:
 * "in 1 min please" is refused rather than half-understood. At most 30 days ahead and not in the past
 * beyond SCHEDULE_PAST_TOLERANCE_MS; otherwise refused (validation_error).
 */
export function parseScheduledAt(value: string, now: Date): ParsedScheduledAt {
  const text = value.trim();
  const iso = isoDate(text);
  const date = iso === undefined ? naturalDate(text, now) : iso;
  if (!date) {
    return invalid(
      'Invalid `scheduled_at` field: use an ISO 8601 date (2026-11-20T09:00:00Z) or natural language such as `in 1 min` or `tomorrow at 9am`.',
    );
  }
  if (date.getTime() - now.getTime() > MAX_SCHEDULE_AHEAD_MS) {
    return invalid('Invalid `scheduled_at` field: an email can be scheduled at most 30 days ahead.');
  }
  if (now.getTime() - date.getTime() > SCHEDULE_PAST_TOLERANCE_MS) {
    return invalid('Invalid `scheduled_at` field: the time is in the past.');
  }
  return { ok: true, date };
}

function invalid(message: string): ParsedScheduledAt {
  return { ok: false, refusal: { name: 'validation_error', message } };
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** An ISO 8601 / RFC 3339 date (also Postgres' `2026-11-20 09:00:00+00`); undefined when not that shape. */
function isoDate(text: string): Date | null | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => Number(part ?? 0));
  const ms = Number(((m[7] ?? '') + '000').slice(0, 3));
  const utc = Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 0, hour, minute, second, ms);
  const check = new Date(utc);
  // Date.UTC rolls 2026-02-30 over into March; a date that does not round-trip does not exist.
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() + 1 !== month ||
    check.getUTCDate() !== day ||
    check.getUTCHours() !== hour ||
    check.getUTCMinutes() !== minute ||
    check.getUTCSeconds() !== second
  ) {
    return null;
  }
  const date = new Date(utc - offsetMs(m[8]));
  return Number.isNaN(date.getTime()) ? null : date;
}

function offsetMs(offset: string | undefined): number {
  if (!offset || offset.toUpperCase() === 'Z') return 0;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  if (hours > 23 || minutes > 59) return Number.NaN;
  return (offset.startsWith('-') ? -1 : 1) * (hours * 60 + minutes) * 60_000;
}

function naturalDate(text: string, now: Date): Date | null {
  const results = chrono.parse(text, { instant: now, timezone: 'UTC' }, { forwardDate: true });
  const only = results[0];
  if (results.length !== 1 || !only || only.index !== 0 || only.text.length !== text.length) return null;
  return only.start.date();
}
