import { describe, expect, it } from '@jest/globals';
import { retryDelayMs, retryOf } from './retry.ts';

const minute = 60_000;

describe('retry back-off', () => {
  it('doubles from 5 minutes to a 67-minute cap, scaled, within ±10%', () => {
    expect(retryDelayMs(1, 1, () => 0.5)).toBe(5 * minute);
    expect(retryDelayMs(2, 1, () => 0.5)).toBe(10 * minute);
    expect(retryDelayMs(5, 1, () => 0.5)).toBe(67 * minute);
    expect(retryDelayMs(40, 1, () => 0.5)).toBe(67 * minute);
    expect(retryDelayMs(1, 1, () => 0)).toBe(4.5 * minute);
    expect(retryDelayMs(1, 1, () => 1)).toBe(5.5 * minute);
    expect(retryDelayMs(1, 0.001, () => 0.5)).toBe(300);
  });
});

describe('the retry of a deferred attempt', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const after = (ms: number) => new Date(now.getTime() + ms);
  const middle = () => 0.5;

  it('comes after the back-off of the attempts that went to the provider, not of those the shaping deferred', () => {
    // Attempt 1 refused by the server: the first step.
    const first = retryOf({ attempt: 1, throttled: 0 }, undefined, now, 1, middle);
    expect(first).toEqual({ attempt: 2, throttled: 0, due: after(5 * minute) });
    // Attempts 2 and 3 find the provider held: each is due when the hold ends, and counted as throttled.
    const holdEnds = after(30 * minute);
    const second = retryOf(first, holdEnds, now, 1, () => 0);
    expect(second).toEqual({ attempt: 3, throttled: 1, due: holdEnds });
    const third = retryOf(second, holdEnds, now, 1, () => 0);
    expect(third).toEqual({ attempt: 4, throttled: 2, due: holdEnds });
    // Attempt 4 refused again: the second step (10 min), as if the held attempts had not been made.
    expect(retryOf(third, undefined, now, 1, middle)).toEqual({ attempt: 5, throttled: 2, due: after(10 * minute) });
  });

  it('spreads a held delivery over a tenth of the wait after the hold ends', () => {
    const holdEnds = after(10 * minute);
    expect(retryOf({ attempt: 1, throttled: 0 }, holdEnds, now, 1, () => 1).due).toEqual(after(11 * minute));
    // A hold that already ended (a late record) is due at once.
    expect(retryOf({ attempt: 1, throttled: 0 }, now, after(minute), 1, () => 1).due).toEqual(now);
  });

  it('takes the first step for a count that does not add up (a command written by hand)', () => {
    expect(retryOf({ attempt: 2, throttled: 5 }, undefined, now, 1, middle).due).toEqual(after(5 * minute));
  });
});
