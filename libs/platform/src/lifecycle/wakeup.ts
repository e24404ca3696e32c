export type Wakeup = {
  /** Ends the current sleep; with no sleep running, makes the next one return at once. */
  signal(): void;
  /** Forgets the signals received so far: call it before doing the work they asked for. */
  clear(): void;
  /** Waits `ms`, or less when signalled. */
  sleep(ms: number): Promise<void>;
};

/**
 * The wait of a polling loop that a notification can cut short (outbox relay, scheduler firing), without
 * losing a signal that arrives while the loop is busy.
 *
 * @example
 * const wakeup = createWakeup();
 * client.on('notification', () => wakeup.signal());
 * while (!stopping) { wakeup.clear(); await work(); await wakeup.sleep(1_000); }
 */
export function createWakeup(): Wakeup {
  let pending = false;
  let wake: (() => void) | undefined;
  return {
    signal() {
      pending = true;
      wake?.();
    },
    clear() {
      pending = false;
    },
    sleep(ms) {
      if (pending) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    },
  };
}
