// The thread's side of a worker pool (worker-pool.ts), '@postline/platform/worker': a worker module calls
// serveWorkerJobs once with what it does to a job. Its own entry, so that a thread loads only this and its
// job's modules, not the platform's runtime (express, pg, amqplib): each thread holds its own module graph.
import { parentPort } from 'node:worker_threads';
import type { WorkerJob, WorkerReply } from './worker-pool.ts';

/**
 * Answers each job the pool posts to this thread with `handle`'s value, or its error's name and message.
 * `transferOf` names the buffers of a value to move to the main thread rather than copy (they must not be
 * shared with anything else: a Buffer from Node's pool is not to be moved).
 *
 * @example
 * serveWorkerJobs(async (job: Input) => compose(job), (raw: Uint8Array) => [raw.buffer as ArrayBuffer]);
 */
export function serveWorkerJobs<In, Out>(
  handle: (job: In) => Out | Promise<Out>,
  transferOf: (value: Out) => ArrayBuffer[] = () => [],
): void {
  const port = parentPort;
  if (!port) throw new Error('serveWorkerJobs runs only in a worker thread');
  port.on('message', ({ id, job }: WorkerJob<In>) => {
    const answer = async (): Promise<WorkerReply<Out>> => {
      try {
        return { id, value: await handle(job) };
      } catch (err) {
        const { name, message } = err instanceof Error ? err : new Error(String(err));
        return { id, error: { name, message } };
      }
    };
    void answer().then((reply) => {
      try {
        port.postMessage(reply, 'value' in reply ? transferOf(reply.value) : []);
      } catch (err) {
        // A value that cannot be posted (a function in it, say): the job fails rather than waits for ever.
        port.postMessage({ id, error: { name: 'Error', message: String(err) } } satisfies WorkerReply<Out>);
      }
    });
  });
}
