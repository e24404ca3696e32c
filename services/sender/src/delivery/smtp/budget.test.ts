import { describe, expect, it } from '@jest/globals';
import { createByteBudget, messageFootprint } from './budget.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('createByteBudget', () => {
  it('grants at once while there is room, and makes a reservation that does not fit wait for a release', async () => {
    const budget = createByteBudget(100);
    const a = await budget.reserve(60);
    const b = await budget.reserve(40);
    expect(budget.reserved).toBe(100);
    let granted = false;
    const c = budget.reserve(30).then((release) => {
      granted = true;
      return release;
    });
    await tick();
    expect(granted).toBe(false);
    a();
    const releaseC = await c;
    expect(granted).toBe(true);
    expect(budget.reserved).toBe(70);
    b();
    releaseC();
    expect(budget.reserved).toBe(0);
  });

  it('serves waiters in arrival order: a small one does not overtake a large one', async () => {
    const budget = createByteBudget(100);
    const first = await budget.reserve(90);
    const order: string[] = [];
    const large = budget.reserve(80).then((r) => (order.push('large'), r));
    const small = budget.reserve(5).then((r) => (order.push('small'), r));
    await tick();
    expect(order).toEqual([]);
    first();
    (await large)();
    (await small)();
    expect(order).toEqual(['large', 'small']);
  });

  it('lets a message larger than the whole budget through once it has the budget to itself', async () => {
    const budget = createByteBudget(100);
    const held = await budget.reserve(10);
    let granted = false;
    const huge = budget.reserve(5_000).then((r) => ((granted = true), r));
    await tick();
    expect(granted).toBe(false);
    held();
    const release = await huge;
    expect(budget.reserved).toBe(100);
    release();
    release(); // a second release changes nothing
    expect(budget.reserved).toBe(0);
  });
});

describe('messageFootprint', () => {
  it('grows with the attachments and the text, counting the composed and the signed copy', () => {
    const small = messageFootprint({ html: '<p>hi</p>', text: null }, 0);
    const withAttachment = messageFootprint({ html: '<p>hi</p>', text: null }, 3_000_000);
    expect(withAttachment - small).toBe(2 * Math.ceil(3_000_000 * 1.4));
    expect(small).toBeGreaterThan(0);
  });
});
