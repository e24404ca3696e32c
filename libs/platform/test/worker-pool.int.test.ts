// The worker pool with real threads (a test worker module, fixtures/pool-worker.ts): threads start with the
// work and stop when idle, a job's error keeps its name, a dead thread fails its jobs and the next job starts
// another, and the calling thread goes on answering while a job holds a worker thread.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { threadId } from 'node:worker_threads';
import { afterAll, describe, expect, it } from '@jest/globals';
import { waitFor } from '@postline/testing';
import { createWorkerPool, type WorkerPool } from '../src/index.ts';
import type { PoolTestJob, PoolTestReply } from './fixtures/pool-worker.ts';

const url = new URL('./fixtures/pool-worker.ts', import.meta.url);
const pools: WorkerPool<PoolTestJob, PoolTestReply>[] = [];
const pool = (opts: { threads: number; idleMs?: number }) => {
  const created = createWorkerPool<PoolTestJob, PoolTestReply>({ name: 'test', url, ...opts });
  pools.push(created);
  return created;
};

afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

describe('the worker pool', () => {
  it('starts a thread with the first job, stops it once idle, and starts one again for the next job', async () => {
    const lazy = pool({ threads: 2, idleMs: 50 });
    expect(lazy.workers()).toHaveLength(0);
    const reply = await lazy.run({ kind: 'echo', value: 'hello' });
    expect(reply.value).toBe('hello');
    // Run on another thread than this one.
    expect(reply.threadId).not.toBe(threadId);
    expect(lazy.workers()).toHaveLength(1);
    await waitFor('the idle thread stopped', () => lazy.workers().length === 0);
    expect((await lazy.run({ kind: 'echo', value: 'again' })).value).toBe('again');
    expect(lazy.workers()).toHaveLength(1);
  });

  it('rejects a job with its error’s name and message', async () => {
    const p = pool({ threads: 1 });
    await expect(p.run({ kind: 'fail', name: 'RangeError', message: 'too big' })).rejects.toMatchObject({
      name: 'RangeError',
      message: 'too big',
    });
    // The thread goes on serving.
    expect((await p.run({ kind: 'echo', value: 'still here' })).value).toBe('still here');
  });

  it('rejects a job that cannot be sent to a thread, and leaves that thread idle to stop', async () => {
    const p = pool({ threads: 1, idleMs: 50 });
    // A function cannot be cloned to another thread: postMessage throws before the job leaves.
    const unclonable = { kind: 'echo', value: (() => 'x') as unknown as string } satisfies PoolTestJob;
    await expect(p.run(unclonable)).rejects.toMatchObject({ name: 'DataCloneError' });
    expect(p.workers()).toHaveLength(1);
    await waitFor('the idle thread stopped', () => p.workers().length === 0);
  });

  it('fails the jobs of a thread that dies, and the next job starts another', async () => {
    const p = pool({ threads: 1 });
    const latch = new SharedArrayBuffer(4);
    const held = p.run({ kind: 'hold', latch });
    await waitFor('the job holding its thread', () => Atomics.load(new Int32Array(latch), 0) === 1);
    const [first] = p.workers();
    await first!.terminate();
    await expect(held).rejects.toThrow(/^test worker exited with code 1$/);
    expect(p.workers()).toEqual([]);
    expect((await p.run({ kind: 'echo', value: 'next' })).value).toBe('next');
    expect(p.workers()).toHaveLength(1);
    expect(p.workers()).not.toContain(first);
  });

  it('leaves the calling thread free while a job holds its worker thread', async () => {
    const p = pool({ threads: 1 });
    const latch = new SharedArrayBuffer(4);
    const flag = new Int32Array(latch);
    let settled = false;
    const held = p.run({ kind: 'hold', latch }).finally(() => (settled = true));
    await waitFor('the job holding its thread', () => Atomics.load(flag, 0) === 1);
    // While the job holds its thread, this one serves a socket round trip from start to end.
    const server = createServer((socket) => socket.end('pong'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    await new Promise((resolve) => server.close(resolve));
    expect(answer).toBe('pong');
    expect(settled).toBe(false);
    Atomics.store(flag, 0, 2);
    Atomics.notify(flag, 0);
    expect((await held).value).toBe('released');
  });
});
