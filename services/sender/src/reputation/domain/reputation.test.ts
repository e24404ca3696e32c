import { describe, expect, it } from '@jest/globals';
import {
  bucketOf,
  bucketSize,
  countOutcomes,
  DEFAULT_THRESHOLDS,
  linesSetFor,
  pausedMessage,
  pauseReasonOf,
  percent,
  thresholdsOf,
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

describe('a team’s own lines', () => {
  const none = { bounceRate: null, complaintRate: null, window: null, minSends: null };

  it('judges by the team’s lines where the operator set them, and by the install’s for the rest', () => {
    const lenient = thresholdsOf(DEFAULT_THRESHOLDS, { ...none, bounceRate: 0.05, complaintRate: 0.001 });
    expect(lenient).toEqual({ bounceRate: 0.05, complaintRate: 0.001, window: 10_000, minSends: 2_500 });
    // 4.5% bounces pause a team on the install's 4% line, not one whose line is 5%.
    const window = { sends: 10_000, bounces: 450, complaints: 0 };
    expect(pauseReasonOf(window, DEFAULT_THRESHOLDS)).toBe('bounce_rate');
    expect(pauseReasonOf(window, lenient)).toBe(undefined);
    expect(pauseReasonOf({ ...window, bounces: 501 }, lenient)).toBe('bounce_rate');
    // 0.09% complaints: over the install's 0.08%, within the team's 0.1%.
    expect(pauseReasonOf({ sends: 10_000, bounces: 0, complaints: 9 }, lenient)).toBe(undefined);
    expect(pauseReasonOf({ sends: 10_000, bounces: 0, complaints: 11 }, lenient)).toBe('complaint_rate');
    expect(linesSetFor({ ...none, bounceRate: 0.05, complaintRate: 0.001 })).toEqual(['bounce_rate', 'complaint_rate']);
  });

  it('judges a small team’s window at its own minimum volume', () => {
    const small = thresholdsOf(DEFAULT_THRESHOLDS, { ...none, window: 1_000, minSends: 200 });
    expect(small).toMatchObject({ window: 1_000, minSends: 200 });
    expect(pauseReasonOf({ sends: 199, bounces: 100, complaints: 0 }, small)).toBe(undefined);
    expect(pauseReasonOf({ sends: 200, bounces: 9, complaints: 0 }, small)).toBe('bounce_rate');
    expect(linesSetFor({ ...none, window: 1_000, minSends: 200 })).toEqual(['window', 'min_sends']);
  });

  it('counts a minimum above the window as the window, so the team is still judged', () => {
    // The install's minimum (2,500) over a team window of 1,000 sends.
    expect(thresholdsOf(DEFAULT_THRESHOLDS, { ...none, window: 1_000 }).minSends).toBe(1_000);
  });

  it('takes the install’s lines for a team without its own', () => {
    expect(thresholdsOf(DEFAULT_THRESHOLDS)).toEqual(DEFAULT_THRESHOLDS);
    expect(thresholdsOf(DEFAULT_THRESHOLDS, none)).toEqual(DEFAULT_THRESHOLDS);
    expect(linesSetFor(undefined)).toEqual([]);
    expect(linesSetFor(none)).toEqual([]);
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
