import { describe, expect, it } from '@jest/globals';
import { createKeyedSlots } from './keyed-slots.ts';

describe('createKeyedSlots', () => {
  it('limits holders per key and not across keys', async () => {
    const slots = createKeyedSlots(2);
    const a1 = await slots.acquire('a');
    const a2 = await slots.acquire('a');
    const b1 = await slots.acquire('b');
    expect([a1, a2, b1].every(Boolean)).toBe(true);
    expect(slots.active('a')).toBe(2);
    expect(slots.active('b')).toBe(1);
    expect(await slots.acquire('a', { timeoutMs: 5 })).toBeUndefined();
  });

  it('hands a released slot to the waiters in arrival order', async () => {
    const slots = createKeyedSlots(1);
    const first = await slots.acquire('k');
    const order: number[] = [];
    const second = slots.acquire('k').then((release) => {
      order.push(2);
      return release;
    });
    const third = slots.acquire('k').then((release) => {
      order.push(3);
      return release;
    });
    first!();
    (await second)!();
    (await third)!();
    expect(order).toEqual([2, 3]);
    expect(slots.active('k')).toBe(0);
  });

  it('refuses at once past maxWaiting, and a release called twice frees one slot', async () => {
    const slots = createKeyedSlots(1);
    const held = await slots.acquire('k');
    const waiting = slots.acquire('k', { maxWaiting: 1 });
    expect(await slots.acquire('k', { maxWaiting: 1 })).toBeUndefined();
    held!();
    held!();
    const next = await waiting;
    expect(slots.active('k')).toBe(1);
    next!();
    expect(slots.active('k')).toBe(0);
  });

  it('a waiter that timed out leaves the line and is not handed the slot', async () => {
    const slots = createKeyedSlots(1);
    const held = await slots.acquire('k');
    expect(await slots.acquire('k', { timeoutMs: 1 })).toBeUndefined();
    const later = slots.acquire('k');
    held!();
    expect(await later).toBeDefined();
    expect(slots.active('k')).toBe(1);
  });
});
