import { describe, expect, it } from '@jest/globals';
import {
  bucketOf,
  bucketSize,
  countOutcomes,
  DEFAULT_THRESHOLDS,
  pausedMessage,
  pauseReasonOf,
  percent,
} from './reputation.ts';

describe('the reputation window', () => {
  it('cuts the window into ten buckets of sends', () => {
    expect(bucketSize(10_000)).toBe(1_000);
    expect(bucketSize(5)).toBe(1);
    expect(bucketOf(0, 10_000)).toBe(0);
    expect(bucketOf(999, 10_000)).toBe(0);
    expect(bucketOf(1_000, 10_000)).toBe(1);
  });

  it('counts hard bounces as bounces and every delivered or bounced recipient as a send', () => {
    expect(
      countOutcomes({ delivered: 3, bounced: [{ type: 'Permanent' }, { type: 'Transient' }], complained: 1 }),
    ).toEqual({ sends: 5, bounces: 1, complaints: 1 });
  });
});

describe('pauseReasonOf', () => {
  const lines = DEFAULT_THRESHOLDS;

  it('judges no window below the minimum volume', () => {
    expect(pauseReasonOf({ sends: lines.minSends - 1, bounces: lines.minSends - 1, complaints: 0 }, lines)).toBe(
      undefined,
    );
  });

  it('pauses only strictly above a line', () => {
    expect(pauseReasonOf({ sends: 10_000, bounces: 400, complaints: 8 }, lines)).toBe(undefined);
    expect(pauseReasonOf({ sends: 10_000, bounces: 401, complaints: 8 }, lines)).toBe('bounce_rate');
    expect(pauseReasonOf({ sends: 10_000, bounces: 0, complaints: 9 }, lines)).toBe('complaint_rate');
  });

  it('takes three complaints at the minimum volume to pause, not one', () => {
    expect(pauseReasonOf({ sends: lines.minSends, bounces: 0, complaints: 1 }, lines)).toBe(undefined);
    expect(pauseReasonOf({ sends: lines.minSends, bounces: 0, complaints: 2 }, lines)).toBe(undefined);
    expect(pauseReasonOf({ sends: lines.minSends, bounces: 0, complaints: 3 }, lines)).toBe('complaint_rate');
  });
});

describe('pausedMessage', () => {
  it('says what is paused, what was measured against which line, and how to resume', () => {
    expect(percent(0.0008)).toBe('0.08%');
    const message = pausedMessage({
      scope: 'domain',
      domain: 'example.com',
      reason: 'bounce_rate',
      sends: 2_000,
      bounce_rate: 0.125,
      complaint_rate: 0,
      line: 0.04,
    });
    expect(message).toContain('Sending from example.com is paused');
    expect(message).toContain('a bounce rate of 12.5% over its last 2000 sends, above the 4% line');
    expect(message).toContain('POST /reputation/resume');
  });
});
