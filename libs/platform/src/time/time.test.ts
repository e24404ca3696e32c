import { describe, expect, it } from '@jest/globals';
import { formatTimestamp } from './time.ts';

describe('formatTimestamp', () => {
  it('formats as the reference API does', () => {
    expect(formatTimestamp(new Date('2023-10-06T23:47:56.678Z'))).toBe('2023-10-06 23:47:56.678+00');
  });
});
