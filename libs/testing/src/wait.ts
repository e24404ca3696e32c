/** Polls `check` every 20 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Resolves as `outcome` does, calling `nudge` every 20 ms until then: for a test that moves a time back in
 * the database (a window's start, a timer) instead of waiting it out, which the system may still write over
 * or not have stored yet. Throws naming `what` when `outcome` has not settled after `timeoutMs`.
 */
export async function nudgeUntil<T>(
  what: string,
  outcome: Promise<T>,
  nudge: () => Promise<unknown>,
  timeoutMs = 10_000,
): Promise<T> {
  let settled = false;
  const done = () => (settled = true);
  outcome.then(done, done);
  await waitFor(
    what,
    async () => {
      if (!settled) await nudge();
      return settled;
    },
    timeoutMs,
  );
  return outcome;
}

/**
 * Waits until the clock has crossed the next whole second (and 20 ms more): a burst started then lands in
 * one window of a per-second rate limit (Redis's clock, close to ours on one machine).
 */
export async function nextSecond(): Promise<void> {
  const boundary = (Math.floor(Date.now() / 1000) + 1) * 1000 + 20;
  await waitFor('the next second', () => Date.now() >= boundary);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type WaitList = {
  /** Something changed: re-check every pending wait. */
  notify: () => void;
  /**
   * Resolves with the first non-undefined value of `check`, tried now and on every `notify()`; rejects
   * after `timeoutMs` with `what` and `detail()` in the message.
   */
  until: <T>(what: string, check: () => T | undefined, timeoutMs: number, detail: () => string) => Promise<T>;
};

/** Event-driven waits over something a test collects (messages, deliveries). */
export function createWaitList(): WaitList {
  const waiters = new Set<() => void>();
  return {
    notify() {
      for (const wake of [...waiters]) wake();
    },
    until(what, check, timeoutMs, detail) {
      return new Promise((resolve, reject) => {
        const attempt = () => {
          const value = check();
          if (value === undefined) return;
          clearTimeout(timer);
          waiters.delete(attempt);
          resolve(value);
        };
        const timer = setTimeout(() => {
          waiters.delete(attempt);
          reject(new Error(`timed out waiting for ${what}; ${detail()}`));
        }, timeoutMs);
        waiters.add(attempt);
        attempt();
      });
    },
  };
}
