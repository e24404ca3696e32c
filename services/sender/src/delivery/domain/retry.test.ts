import { describe, expect, it } from '@jest/globals';
import { retryDelayMs } from './retry.ts';

describe('retry back-off', () => {
  it('doubles from 5 minutes to a 67-minute cap, scaled, within ±10%', () => {
    const minute = 60_000;
    expect(retryDelayMs(1, 1, () => 0.5)).toBe(5 * minute);
    expect(retryDelayMs(2, 1, () => 0.5)).toBe(10 * minute);
    expect(retryDelayMs(5, 1, () => 0.5)).toBe(67 * minute);
    expect(retryDelayMs(40, 1, () => 0.5)).toBe(67 * minute);
    expect(retryDelayMs(1, 1, () => 0)).toBe(4.5 * minute);
    expect(retryDelayMs(1, 1, () => 1)).toBe(5.5 * minute);
    expect(retryDelayMs(1, 0.001, () => 0.5)).toBe(300);
  });
});
