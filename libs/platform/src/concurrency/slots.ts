// Waiting for a slot that its holder hands over on release: a line of waiters, and the limit on holders
// built from it. The MTA's sessions per destination, the dispatcher's deliveries per endpoint and the
// large request bodies all wait in such a line.

/**
 * Joins `line` and resolves true once a releaser takes this waiter off the front and calls it (the slot is
 * then handed over), or false when `timeoutMs` passed first (the waiter leaves the line).
 */
export function waitInLine(line: (() => void)[], timeoutMs?: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            const at = line.indexOf(waiter);
            if (at >= 0) line.splice(at, 1);
            resolve(at < 0);
          }, timeoutMs);
    timer?.unref();
    const waiter = () => {
      clearTimeout(timer);
      resolve(true);
    };
    line.push(waiter);
  });
}

/** `fn`, but only its first call does anything: a release that may be called twice. */
export function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/** At most `max` holders at once, the others waiting in line (FIFO); `acquire` resolves to the release. */
export function createSlots(max: number): { acquire: () => Promise<() => void> } {
  let held = 0;
  const line: (() => void)[] = [];
  const release = () => {
    const next = line.shift();
    if (next)
      next(); // the slot passes straight to the next in line
    else held--;
  };
  return {
    async acquire() {
      if (held < max) held++;
      else await waitInLine(line);
      return once(release);
    },
  };
}
