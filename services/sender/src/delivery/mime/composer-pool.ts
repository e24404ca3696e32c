// Building and signing the MIME message is the delivery's CPU-heavy step (nodemailer's composer, DKIM
// canonicalization, an RSA-2048 signature: about a millisecond a message). On the event loop
// that also drives the SMTP sessions, the database and the broker, it delays every other reply; so the
// sender hands it to worker threads, each with its own event loop.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Logger } from '@postline/platform';
import { composeMessage, type ComposeInput } from '../../message/index.ts';
import { createDkimSigner, DkimSigningError, type DkimKey } from './dkim.ts';

export type Composer = {
  /** The RFC 5322 message of `input`, DKIM-signed with `key`. Rejects as composeMessage and a DkimSigner do. */
  compose(input: ComposeInput, key: DkimKey): Promise<Buffer>;
  close(): Promise<void>;
};

/**
 * The email itself cannot be made into a message (composeMessage refused it): trying again gives the same
 * error, so its delivery ends failed instead of being retried. A DkimSigningError is the other such error.
 */
export class CompositionError extends Error {
  override name = 'CompositionError';
}

/** Composes and signs on the calling thread (tests, tools), with a signer of its own. */
export function createInProcessComposer(): Composer {
  const sign = createDkimSigner();
  return {
    compose: async (input, key) => {
      try {
        return await sign(await composeMessage(input), key);
      } catch (err) {
        throw errorOfKind(err instanceof Error ? err : new Error(String(err)));
      }
    },
    close: () => Promise.resolve(),
  };
}

/**
 * A composing or signing error as its kind, on a thread or not: signing refused (DkimSigningError), or the
 * email refused by the composer (CompositionError); a RangeError (out of memory for a buffer, say) is the
 * thread's trouble, not the email's, and is retried.
 */
function errorOfKind(error: { name: string; message: string }): Error {
  if (error.name === 'DkimSigningError')
    return error instanceof DkimSigningError ? error : new DkimSigningError(error.message);
  if (error.name === 'RangeError') return new Error(error.message);
  return new CompositionError(error.message);
}

/** What a worker answers for job `id`: the signed bytes, or the error's name and message. */
export type ComposerReply = { id: number; raw: Uint8Array } | { id: number; error: { name: string; message: string } };

/** One less than the machine's cores (the main thread keeps one), at least one, at most four. */
export function defaultComposerThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/**
 * Up to `threads` worker threads composing and signing; each job goes to the worker with the fewest jobs in
 * hand. The threads start when there is work for them: the first with the first job, another only when a
 * job arrives while every thread has one in hand (each thread holds its own heap and module graph, 40 MB
 * or more, which an idle sender, or one sending a trickle, does not need). A worker that dies fails its
 * jobs (the attempt is then retried, as after any failed attempt) and is replaced. Errors keep their kind
 * (errorOfKind); a worker's death is neither a DkimSigningError nor a CompositionError.
 */
export function createComposerPool(opts: {
  threads: number;
  logger?: Logger;
}): Composer & { workers(): readonly Worker[] } {
  type Job = { resolve: (raw: Buffer) => void; reject: (err: Error) => void };
  type Slot = { worker: Worker; jobs: Map<number, Job> };
  const slots: Slot[] = [];
  let nextId = 0;
  let closing = false;

  function spawn(): Slot {
    const worker = new Worker(new URL('./composer-worker.ts', import.meta.url));
    const slot: Slot = { worker, jobs: new Map() };
    worker.on('message', (reply: ComposerReply) => {
      const job = slot.jobs.get(reply.id);
      if (!job) return;
      slot.jobs.delete(reply.id);
      if ('raw' in reply) job.resolve(Buffer.from(reply.raw.buffer, reply.raw.byteOffset, reply.raw.byteLength));
      else job.reject(errorOfKind(reply.error));
    });
    const fail = (err: Error) => {
      for (const job of slot.jobs.values()) job.reject(err);
      slot.jobs.clear();
      const at = slots.indexOf(slot);
      if (at < 0) return;
      if (closing) slots.splice(at, 1);
      else {
        opts.logger?.error({ err }, 'composer worker died; starting another');
        slots[at] = spawn();
      }
    };
    worker.on('error', (err) => fail(err));
    worker.on('exit', (code) => fail(new Error(`composer worker exited with code ${code}`)));
    // An idle pool does not keep the process alive.
    worker.unref();
    return slot;
  }

  const most = Math.max(1, opts.threads);

  /** The thread with the fewest jobs in hand; a new one while each has some and there is room for more. */
  function least(): Slot {
    const idle = slots.reduce<Slot | undefined>((a, b) => (!a || b.jobs.size < a.jobs.size ? b : a), undefined);
    if (idle && (idle.jobs.size === 0 || slots.length >= most)) return idle;
    const slot = spawn();
    slots.push(slot);
    return slot;
  }

  return {
    compose(input, key) {
      if (closing) return Promise.reject(new Error('composer pool is closed'));
      const slot = least();
      const id = nextId++;
      return new Promise<Buffer>((resolve, reject) => {
        slot.jobs.set(id, { resolve, reject });
        slot.worker.postMessage({ id, input, key });
      });
    },
    async close() {
      closing = true;
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
    workers: () => slots.map((slot) => slot.worker),
  };
}
