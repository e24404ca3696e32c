import { PermanentError, RetryLaterError } from './errors.ts';

/** Retries a message has had so far; absent on the first delivery. */
export const RETRY_COUNT_HEADER = 'x-retry-count';

export type RetryPolicy = {
  /** Delay tiers in ms, ascending; one retry queue each (quorum queues only expire at the head). */
  tiersMs: readonly number[];
  /** Total deliveries to the handler, the first one included, before the message is dead-lettered. */
  maxAttempts: number;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  tiersMs: Object.freeze([1_000, 10_000, 60_000]),
  maxAttempts: 6,
});

export type DeadReason = 'invalid' | 'permanent' | 'exhausted';

export type FailureDecision = { action: 'retry'; tierMs: number } | { action: 'dead'; reason: DeadReason };

/**
 * What to do with a message whose handler threw on attempt `attempt` (1 = first delivery).
 *
 * @example
 * decideFailure(new Error('boom'), 1, { tiersMs: [1000, 10000], maxAttempts: 3 }) // { action: 'retry', tierMs: 1000 }
 */
export function decideFailure(err: unknown, attempt: number, policy: RetryPolicy): FailureDecision {
  if (err instanceof PermanentError) return { action: 'dead', reason: 'permanent' };
  if (attempt >= policy.maxAttempts || policy.tiersMs.length === 0) return { action: 'dead', reason: 'exhausted' };
  if (err instanceof RetryLaterError) return { action: 'retry', tierMs: tierFor(err.delayMs, policy.tiersMs) };
  // Backoff: the n-th retry waits in the n-th tier, then stays in the last one.
  const index = Math.min(attempt - 1, policy.tiersMs.length - 1);
  return { action: 'retry', tierMs: policy.tiersMs[index] ?? 0 };
}

/** The smallest tier that waits at least `delayMs`; the largest tier when none does. */
export function tierFor(delayMs: number, tiersMs: readonly number[]): number {
  for (const tier of tiersMs) if (tier >= delayMs) return tier;
  return tiersMs[tiersMs.length - 1] ?? 0;
}

/** Throws on a policy the topology cannot express, at start-up rather than on the first failure. */
export function checkRetryPolicy(policy: RetryPolicy): void {
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new Error(`maxAttempts must be a positive integer, got ${policy.maxAttempts}`);
  }
  let previous = 0;
  for (const tier of policy.tiersMs) {
    if (!Number.isInteger(tier) || tier <= previous) throw new Error(`tiersMs must be ascending positive integers`);
    previous = tier;
  }
}
