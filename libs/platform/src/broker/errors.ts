/**
 * What a consumer's handler throws decides what happens to the message (the consumer wrapper is the one
 * place that maps errors to ack / retry / dead-letter). Anything not listed here is retried through the
 * delay tiers and dead-lettered once the attempts run out.
 */

/** The message can never succeed (a referenced row is gone, the input breaks an invariant): dead-letter now. */
export class PermanentError extends Error {
  override name = 'PermanentError';
}

/**
 * An expected, temporary condition (a read model not caught up yet, a rate limit): retry after about
 * `delayMs`, rounded up to the nearest delay tier. Counts as an attempt, so it cannot loop forever.
 */
export class RetryLaterError extends Error {
  override name = 'RetryLaterError';
  readonly delayMs: number;

  constructor(delayMs: number, message = `retry in ${delayMs} ms`) {
    super(message);
    this.delayMs = delayMs;
  }
}

/** The broker has no live connection right now (it keeps reconnecting in the background). */
export class BrokerUnavailableError extends Error {
  override name = 'BrokerUnavailableError';
  constructor(message = 'broker not connected') {
    super(message);
  }
}
