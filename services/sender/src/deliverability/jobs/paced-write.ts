// A write asked for at once, at most one per gap: a provider pushing back on every session of a burst asks
// for one a delivery, and the asks within a gap share one write at its end.

export type PacedWrite = {
  /** Runs now when the last run began `gapMs` ago or more, else once at the end of the gap; its promise. */
  ask: () => Promise<void>;
  /** Drops a run not begun (its promise resolves). */
  stop: () => void;
};

export function createPacedWrite(run: () => Promise<void>, gapMs: number, now: () => number = Date.now): PacedWrite {
  let lastAt = -Infinity;
  let due: { timer: NodeJS.Timeout; resolve: () => void; done: Promise<void> } | undefined;
  const start = () => {
    lastAt = now();
    return run();
  };
  return {
    ask() {
      if (due) return due.done;
      const waitMs = lastAt + gapMs - now();
      if (waitMs <= 0) return start();
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      const timer = setTimeout(() => {
        due = undefined;
        void start().then(resolve, resolve);
      }, waitMs);
      timer.unref();
      due = { timer, resolve, done };
      return done;
    },
    stop() {
      if (!due) return;
      clearTimeout(due.timer);
      due.resolve();
      due = undefined;
    },
  };
}
