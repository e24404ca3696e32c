const MINUTE = 60_000;

/**
 * Waits after a 4xx, by attempt (Postfix's qmgr(8) backoff starts at 5 min and doubles up to ~67 min;
 * RFC 5321 §4.5.4.1 asks for at least 30 min between retries of one destination in steady state).
 */
const BACKOFF_MS = [5, 10, 20, 40, 67].map((m) => m * MINUTE);

/** How long an email keeps being retried after its first deferral (Postfix's maximal_queue_lifetime). */
export const DELIVERY_LIFETIME_MS = 5 * 24 * 60 * MINUTE;

/**
 * Repeated transient bounces of one address (mailbox full, retries run out) make it a temporary
 * suppression: this many within the window, suppressed for the duration.
 */
export const TRANSIENT_SUPPRESSION = { bounces: 3, windowMs: 7 * 24 * 60 * MINUTE, durationMs: 3 * 24 * 60 * MINUTE };

/**
 * The wait before attempt `attempt + 1`, scaled by POSTLINE_DELAY_SCALE, with ±10% jitter so that
 * deferrals from one outage do not come back at the same instant.
 *
 * @example
 * retryDelayMs(1, 1) // about 300_000 (5 min ± 30 s)
 */
export function retryDelayMs(attempt: number, scale: number, random: () => number = Math.random): number {
  const base = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length) - 1] ?? (BACKOFF_MS.at(-1) as number);
  return Math.round(base * scale * (0.9 + 0.2 * random()));
}
