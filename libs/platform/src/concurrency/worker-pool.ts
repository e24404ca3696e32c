// CPU-heavy work (composing and signing a message, reading a DMARC report) off the event loop that drives a
// service's sockets: a pool of worker threads, each with its own event loop. The threads side is
// worker-thread.ts (`@postline/platform/worker`), which a worker module calls once.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger/logger.ts';

/** What a thread answers for job `id`: the value, or the error's name and message (its stack stays there). */
export type WorkerReply<Out> = { id: number; value: Out } | { id: number; error: { name: string; message: string } };

/** What the pool posts to a thread. */
export type WorkerJob<In> = { id: number; job: In };

export type WorkerPool<In, Out> = {
  /**
   * Runs `job` on a thread and resolves with its value. `job` is copied to the thread (structured clone: a
   * Buffer arrives as a plain Uint8Array), except what `transfer` moves. Rejects with the job's error (as
   * `errorOf` makes it), or when its thread dies or the pool is closed.
   */
  run(job: In, transfer?: readonly ArrayBuffer[]): Promise<Out>;
  /** Stops every thread; jobs in hand are rejected. */
  close(): Promise<void>;
  /** The threads running now. */
  workers(): readonly Worker[];
};

/**
 * Up to `threads` worker threads running `url`'s module; each job goes to the thread with the fewest jobs in
 * hand. Threads start when there is work for them: the first with the first job, another only when a job
 * arrives while every thread has one in hand (each holds its own heap and module graph, tens of MB, which an
 * idle service does not need). With `idleMs`, a thread that has had no job for that long stops, so the
 * memory goes back once the work is done; the next job starts one again. A thread that dies fails its jobs
 * (logged), and the next job starts another.
 *
 * @example
 * const pool = createWorkerPool<Input, Uint8Array>({
 *   name: 'composer', url: new URL('./composer-worker.ts', import.meta.url), threads: 3, logger });
 * const raw = await pool.run(input);
 */
export function createWorkerPool<In, Out>(opts: {
  /** Names the pool's threads in logs and errors (`composer worker exited with code 1`). */
  name: string;
  url: URL;
  threads: number;
  /** Stop a thread idle this long (ms); unset, threads run until the pool is closed. */
  idleMs?: number;
  /** Makes the error a job is rejected with from the one its thread answered (default: an Error of that name). */
  errorOf?: (error: { name: string; message: string }) => Error;
  logger?: Logger;
}): WorkerPool<In, Out> {
  type Job = { resolve: (value: Out) => void; reject: (err: Error) => void };
  type Slot = { worker: Worker; jobs: Map<number, Job>; idle?: NodeJS.Timeout; retired: boolean };
  const slots: Slot[] = [];
  const most = Math.max(1, opts.threads);
  const errorOf =
    opts.errorOf ??
    ((error: { name: string; message: string }) => Object.assign(new Error(error.message), { name: error.name }));
  let nextId = 0;
  let closing = false;

  const remove = (slot: Slot) => {
    clearTimeout(slot.idle);
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
  };

  /** Stops the thread once it has been idle `idleMs` (a job given meanwhile cancels it). */
  const watchIdle = (slot: Slot) => {
    if (opts.idleMs === undefined || slot.jobs.size > 0) return;
    clearTimeout(slot.idle);
    slot.idle = setTimeout(() => {
      if (slot.jobs.size > 0) return;
      slot.retired = true;
      remove(slot);
      void slot.worker.terminate();
    }, opts.idleMs);
    // An idle thread's timer does not keep the process alive.
    slot.idle.unref();
  };

  function spawn(): Slot {
    const worker = new Worker(opts.url);
    const slot: Slot = { worker, jobs: new Map(), retired: false };
    worker.on('message', (reply: WorkerReply<Out>) => {
      const job = slot.jobs.get(reply.id);
      if (!job) return;
      slot.jobs.delete(reply.id);
      if ('error' in reply) job.reject(errorOf(reply.error));
      else job.resolve(reply.value);
      watchIdle(slot);
    });
    const fail = (err: Error) => {
      for (const job of slot.jobs.values()) job.reject(err);
      slot.jobs.clear();
      if (!slots.includes(slot)) return;
      remove(slot);
      if (!closing && !slot.retired)
        opts.logger?.error({ err }, `${opts.name} worker died; another starts with the next job`);
    };
    worker.on('error', (err) => fail(err));
    worker.on('exit', (code) => fail(new Error(`${opts.name} worker exited with code ${code}`)));
    // A thread does not keep the process alive on its own.
    worker.unref();
    return slot;
  }

  /** The thread with the fewest jobs in hand; a new one while each has some and there is room for more. */
  function least(): Slot {
    const idle = slots.reduce<Slot | undefined>((a, b) => (!a || b.jobs.size < a.jobs.size ? b : a), undefined);
    if (idle && (idle.jobs.size === 0 || slots.length >= most)) return idle;
    const slot = spawn();
    slots.push(slot);
    return slot;
  }

  return {
    run(job, transfer = []) {
      if (closing) return Promise.reject(new Error(`${opts.name} pool is closed`));
      const slot = least();
      clearTimeout(slot.idle);
      const id = nextId++;
      return new Promise<Out>((resolve, reject) => {
        slot.jobs.set(id, { resolve, reject });
        try {
          slot.worker.postMessage({ id, job } satisfies WorkerJob<In>, [...transfer]);
        } catch (err) {
          // A job that cannot be cloned or transferred never reached the thread: it must not hold it busy.
          slot.jobs.delete(id);
          watchIdle(slot);
          reject(err as Error);
        }
      });
    },
    async close() {
      closing = true;
      const stopping = [...slots];
      for (const slot of stopping) remove(slot);
      await Promise.all(stopping.map((slot) => slot.worker.terminate()));
    },
    workers: () => slots.map((slot) => slot.worker),
  };
}
