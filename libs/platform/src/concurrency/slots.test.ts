import { describe, expect, it } from '@jest/globals';
import { createSlots, once, waitInLine } from './slots.ts';

describe('waitInLine', () => {
  it('resolves true when a releaser hands the slot over, false (leaving the line) when the wait runs out', async () => {
    const line: (() => void)[] = [];
    const handed = waitInLine(line, 1000);
    const timedOut = waitInLine(line, 10);
    expect(line).toHaveLength(2);
    line.shift()!();
    expect(await handed).toBe(true);
    expect(await timedOut).toBe(false);
    expect(line).toHaveLength(0);
  });
});

describe('createSlots', () => {
  it('lets `max` hold at once and hands each release to the next in line, first come first served', async () => {
    const slots = createSlots(1);
    const order: string[] = [];
    const first = await slots.acquire();
    const second = slots.acquire().then((release) => (order.push('second'), release));
    const third = slots.acquire().then((release) => (order.push('third'), release));
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    first(); // a second call of the same release frees nothing more
    const releaseSecond = await second;
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['second']);
    releaseSecond();
    (await third)();
    expect(order).toEqual(['second', 'third']);
  });
});

describe('once', () => {
  it('runs its function on the first call only', () => {
    let n = 0;
    const f = once(() => n++);
    f();
    f();
    expect(n).toBe(1);
  });
});
