import { describe, expect, it } from '@jest/globals';
import { createBatcher, createBatchLoader } from './batcher.ts';

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('createBatcher', () => {
  it('flushes a full batch at once and the rest after maxWaitMs', async () => {
    const batches: number[][] = [];
    const b = createBatcher<number>({
      maxItems: 3,
      maxWaitMs: 30,
      flush: (items) => Promise.resolve(void batches.push(items)),
    });
    for (let i = 1; i <= 4; i++) b.add(i);
    await tick();
    expect(batches).toEqual([[1, 2, 3]]);
    await tick(50);
    expect(batches).toEqual([[1, 2, 3], [4]]);
    expect(b.pending).toBe(0);
  });

  it('with maxWaitMs 0, batches what arrived in the same turn', async () => {
    const batches: number[][] = [];
    const b = createBatcher<number>({
      maxItems: 10,
      maxWaitMs: 0,
      flush: (items) => Promise.resolve(void batches.push(items)),
    });
    b.add(1);
    b.add(2);
    await tick(5);
    b.add(3);
    await tick(5);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('holds items while maxConcurrent batches run and sends them together when one finishes', async () => {
    const batches: number[][] = [];
    const first = gate();
    const b = createBatcher<number>({
      maxItems: 100,
      maxWaitMs: 0,
      maxConcurrent: 1,
      flush: async (items) => {
        batches.push(items);
        if (batches.length === 1) await first.opened;
      },
    });
    b.add(1);
    await tick(5);
    for (let i = 2; i <= 5; i++) {
      b.add(i);
      await tick(2);
    }
    expect(batches).toEqual([[1]]);
    first.open();
    await tick(5);
    expect(batches).toEqual([[1], [2, 3, 4, 5]]);
  });

  it('drain flushes waiting items now and waits for running batches', async () => {
    let done = 0;
    const b = createBatcher<number>({
      maxItems: 10,
      maxWaitMs: 60_000,
      flush: async (items) => {
        await tick(10);
        done += items.length;
      },
    });
    b.add(1);
    b.add(2);
    await b.drain();
    expect(done).toBe(2);
    expect(b.pending).toBe(0);
  });
});

describe('createBatchLoader', () => {
  it('loads the keys asked for together with one call and gives each caller its own value', async () => {
    const calls: string[][] = [];
    const load = createBatchLoader<string, string>({
      maxItems: 10,
      maxWaitMs: 0,
      loadMany: (keys) => {
        calls.push(keys);
        return Promise.resolve(keys.map((k) => k.toUpperCase()));
      },
    });
    expect(await Promise.all([load('a'), load('b'), load('a')])).toEqual(['A', 'B', 'A']);
    expect(calls).toEqual([['a', 'b', 'a']]);
    expect(await load('c')).toBe('C');
    expect(calls).toHaveLength(2);
  });

  it('rejects every caller of a failed call, and the next call goes on', async () => {
    let fail = true;
    const load = createBatchLoader<number, number>({
      maxItems: 10,
      maxWaitMs: 0,
      loadMany: (keys) => (fail ? Promise.reject(new Error('down')) : Promise.resolve(keys.map((k) => k * 2))),
    });
    const results = await Promise.allSettled([load(1), load(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await load(3)).toBe(6);
  });
});
