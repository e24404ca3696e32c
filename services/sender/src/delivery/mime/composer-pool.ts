// Building and signing the MIME message is the delivery's CPU-heavy step (nodemailer's composer, DKIM
// canonicalization, an RSA-2048 signature: about a millisecond a message). On the event loop
// that also drives the SMTP sessions, the database and the broker, it delays every other reply; so the
// sender hands it to worker threads, each with its own event loop.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { createWorkerPool, type Logger } from '@postline/platform';
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

/** What a composer thread is given: the email and the key to sign it with. */
export type ComposerJob = { input: ComposeInput; key: DkimKey };

/** One less than the machine's cores (the main thread keeps one), at least one, at most four. */
export function defaultComposerThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/**
 * Up to `threads` worker threads composing and signing (the platform's worker pool): they start when there is
 * work for them, the first with the first job, another only when a job arrives while every thread has one in
 * hand (each thread holds its own heap and module graph, 40 MB or more, which an idle sender, or one sending a
 * trickle, does not need). A worker that dies fails its jobs (the attempt is then retried, as after any failed
 * attempt); the next job starts another. Errors keep their kind (errorOfKind); a worker's death is neither a
 * DkimSigningError nor a CompositionError.
 */
export function createComposerPool(opts: {
  threads: number;
  logger?: Logger;
}): Composer & { workers(): readonly Worker[] } {
  const pool = createWorkerPool<ComposerJob, Uint8Array>({
    name: 'composer',
    url: new URL('./composer-worker.ts', import.meta.url),
    threads: opts.threads,
    errorOf: errorOfKind,
    logger: opts.logger,
  });
  return {
    async compose(input, key) {
      const raw = await pool.run({ input, key });
      return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    },
    close: () => pool.close(),
    workers: () => pool.workers(),
  };
}
