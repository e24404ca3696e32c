export type BatcherOptions<T> = {
  /** Most items in one batch. */
  maxItems: number;
  /**
   * How long a batch waits for more items after its first one, unless it is full first. 0: until the
   * current turn of the event loop has ended (items that arrived together go together).
   */
  maxWaitMs: number;
  /**
   * Most batches flushed at once. While that many run, items wait (any number of them) and go as soon as
   * one finishes: under load batches grow by themselves, while a lone item waits only `maxWaitMs`.
   * Default: no limit.
   */
  maxConcurrent?: number;
  /** Handles one batch. Its errors are the caller's to handle: a rejection is only logged by `onError`. */
  flush: (items: T[]) => Promise<void>;
  onError?: (err: unknown) => void;
};

export type Batcher<T> = {
  add(item: T): void;
  /** Flushes what is waiting now and resolves once every batch started so far has finished. */
  drain(): Promise<void>;
  /** Items added and not yet through their flush. */
  readonly pending: number;
};

/**
 * Collects items into batches by size and time, so that many small units of work share one database
 * transaction.
 *
 * @example
 * const results = createBatcher({ maxItems: 64, maxWaitMs: 5, flush: (items) => saveAll(items) });
 * results.add(result);
 */
export function createBatcher<T>(opts: BatcherOptions<T>): Batcher<T> {
  if (!(opts.maxItems >= 1)) throw new Error('maxItems must be at least 1');
  const maxConcurrent = opts.maxConcurrent ?? Number.POSITIVE_INFINITY;
  const waiting: T[] = [];
  /** The first waiting item's wait is over (or a drain asked): flush once a slot is free. */
  let due = false;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  let pending = 0;
  const running = new Set<Promise<void>>();

  function cancelTimer(): void {
    if (timer === undefined) return;
    if (opts.maxWaitMs === 0) clearImmediate(timer as NodeJS.Immediate);
    else clearTimeout(timer as NodeJS.Timeout);
    timer = undefined;
  }

  function expire(): void {
    timer = undefined;
    due = true;
    pump();
  }

  /** Starts every batch that may start now. */
  function pump(): void {
    while (waiting.length > 0 && running.size < maxConcurrent && (due || waiting.length >= opts.maxItems)) {
      const items = waiting.splice(0, opts.maxItems);
      if (waiting.length === 0) {
        due = false;
        cancelTimer();
      }
      const run = Promise.resolve()
        .then(() => opts.flush(items))
        .catch((err: unknown) => opts.onError?.(err))
        .finally(() => {
          pending -= items.length;
          // What waited for this slot (all slots were taken) has waited long enough.
          if (running.size >= maxConcurrent && waiting.length > 0) due = true;
          running.delete(run);
          pump();
        });
      running.add(run);
    }
    if (waiting.length > 0 && !due && timer === undefined) {
      timer = opts.maxWaitMs === 0 ? setImmediate(expire) : setTimeout(expire, opts.maxWaitMs);
    }
  }

  return {
    add(item) {
      pending++;
      waiting.push(item);
      pump();
    },
    async drain() {
      due = waiting.length > 0;
      pump();
      while (running.size > 0 || waiting.length > 0) {
        await Promise.race([...running]);
        due = waiting.length > 0;
        pump();
      }
    },
    get pending() {
      return pending;
    },
  };
}

/**
 * A value per key, loaded for many keys at once: the keys asked for together (as `createBatcher` groups
 * them) go to one `loadMany` call, which answers them in order; each caller gets its own value, or the
 * call's error.
 *
 * @example
 * const endpointsOf = createBatchLoader({ maxItems: 256, maxWaitMs: 0, maxConcurrent: 1, loadMany: (teams) => readAll(teams) });
 * const mine = await endpointsOf(teamId);
 */
export function createBatchLoader<K, V>(
  opts: Pick<BatcherOptions<K>, 'maxItems' | 'maxWaitMs' | 'maxConcurrent'> & { loadMany: (keys: K[]) => Promise<V[]> },
): (key: K) => Promise<V> {
  type Job = { key: K; resolve: (value: V) => void; reject: (err: unknown) => void };
  const batcher = createBatcher<Job>({
    maxItems: opts.maxItems,
    maxWaitMs: opts.maxWaitMs,
    maxConcurrent: opts.maxConcurrent,
    flush: async (jobs) => {
      try {
        const values = await opts.loadMany(jobs.map((job) => job.key));
        jobs.forEach((job, i) => job.resolve(values[i] as V));
      } catch (err) {
        for (const job of jobs) job.reject(err);
      }
    },
  });
  return (key) => new Promise((resolve, reject) => batcher.add({ key, resolve, reject }));
}
