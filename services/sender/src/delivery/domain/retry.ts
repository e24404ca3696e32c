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

/** A deferred delivery's next attempt: its number, when it is due, and how many attempts the shaping deferred. */
export type Retry = { attempt: number; throttled: number; due: Date };

/**
 * The retry of attempt `attempt`, of which `throttled` attempts before it were deferred by our own traffic
 * shaping. An attempt the shaping deferred too (`throttledUntil`: when its provider has a turn again) made no
 * connection: its retry is due at that turn, spread over a tenth of the wait so that the held mail does not
 * all come back at once, and it takes no step of the back-off, which counts only the attempts that went to
 * the provider (Postfix keeps mail for a held destination queued the same way). The delivery lifetime counts
 * from the first deferral either way.
 *
 * @example
 * retryOf({ attempt: 3, throttled: 1 }, undefined, now, 1) // due in about 10 min: the second step
 */
export function retryOf(
  at: { attempt: number; throttled: number },
  throttledUntil: Date | undefined,
  now: Date,
  scale: number,
  random: () => number = Math.random,
): Retry {
  if (throttledUntil) {
    const wait = Math.max(0, throttledUntil.getTime() - now.getTime());
    return {
      attempt: at.attempt + 1,
      throttled: at.throttled + 1,
      due: new Date(throttledUntil.getTime() + random() * 0.1 * wait),
    };
  }
  const step = Math.max(1, at.attempt - at.throttled);
  return {
    attempt: at.attempt + 1,
    throttled: at.throttled,
    due: new Date(now.getTime() + retryDelayMs(step, scale, random)),
  };
}
