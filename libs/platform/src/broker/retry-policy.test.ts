import { describe, expect, it } from '@jest/globals';
import { PermanentError, RetryLaterError } from './errors.ts';
import { checkRetryPolicy, decideFailure, tierFor } from './retry-policy.ts';

const policy = { tiersMs: [1_000, 10_000, 60_000], maxAttempts: 5 };

describe('decideFailure', () => {
  it('walks up the tiers and stays in the last one until the attempts run out', () => {
    const decisions = [1, 2, 3, 4, 5].map((attempt) => decideFailure(new Error('boom'), attempt, policy));
    expect(decisions).toEqual([
      { action: 'retry', tierMs: 1_000 },
      { action: 'retry', tierMs: 10_000 },
      { action: 'retry', tierMs: 60_000 },
      { action: 'retry', tierMs: 60_000 },
      { action: 'dead', reason: 'exhausted' },
    ]);
  });

  it('dead-letters a PermanentError on the first attempt', () => {
    expect(decideFailure(new PermanentError('gone'), 1, policy)).toEqual({ action: 'dead', reason: 'permanent' });
  });

  it('rounds a RetryLaterError delay up to a tier, and it still counts as an attempt', () => {
    expect(decideFailure(new RetryLaterError(5_000), 1, policy)).toEqual({ action: 'retry', tierMs: 10_000 });
    expect(decideFailure(new RetryLaterError(5_000), 5, policy)).toEqual({ action: 'dead', reason: 'exhausted' });
  });
});

describe('tierFor', () => {
  it('picks the smallest tier that waits long enough, else the largest', () => {
    expect(tierFor(0, [100, 200])).toBe(100);
    expect(tierFor(150, [100, 200])).toBe(200);
    expect(tierFor(9_999, [100, 200])).toBe(200);
  });
});

describe('checkRetryPolicy', () => {
  it('rejects tiers out of order and a non-positive attempt budget', () => {
    expect(() => checkRetryPolicy({ tiersMs: [10, 5], maxAttempts: 3 })).toThrow(/ascending/);
    expect(() => checkRetryPolicy({ tiersMs: [10], maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => checkRetryPolicy(policy)).not.toThrow();
  });
});
