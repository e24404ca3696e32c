/** Waits before attempts 2–8 (docs/behaviour.md, "Webhooks"): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_WAITS_S = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
export const MAX_ATTEMPTS = RETRY_WAITS_S.length + 1;
/** Each wait varies by up to this fraction either way. */
export const JITTER = 0.1;
/** An endpoint whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_S = 5 * 24 * 3600;
/** After a rotation the old secret keeps signing (second) for this long. */
export const ROTATION_OVERLAP_S = 24 * 3600;

/**
 * Milliseconds to wait after failed attempt `attempt` (1-based) before the next one, or undefined when it
 * was the last. `random` in [0, 1) picks the jitter; `scale` is POSTLINE_DELAY_SCALE.
 */
export function retryDelayMs(attempt: number, scale: number, random: number): number | undefined {
  const wait = RETRY_WAITS_S[attempt - 1];
  if (wait === undefined) return undefined;
  return wait * 1000 * scale * (1 + JITTER * (2 * random - 1));
}

/** True once the endpoint's unbroken run of failures has lasted the disable window. */
export function shouldDisable(failingSince: Date | null, now: Date, scale: number): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_S * 1000 * scale;
}
