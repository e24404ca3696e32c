import { describe, expect, it } from '@jest/globals';
import { dkimVerdict, verdictOf } from './authentication-verdicts.ts';

describe('verdictOf', () => {
  it('maps each RFC 8601 result keyword to the reference values', () => {
    expect(
      ['pass', 'fail', 'softfail', 'neutral', 'policy', 'temperror', 'permerror', 'none', 'skipped', 'declined'].map(
        verdictOf,
      ),
    ).toEqual([
      'pass',
      'fail',
      'gray',
      'gray',
      'gray',
      'processing_failed',
      'processing_failed',
      'unknown',
      'unknown',
      'unknown',
    ]);
    expect(verdictOf('PASS')).toBe('pass');
    expect(verdictOf(undefined)).toBe('unknown');
    expect(verdictOf('something-new')).toBe('unknown');
  });
});

describe('dkimVerdict', () => {
  it('passes when one signature passes, else takes the strongest other verdict', () => {
    expect(dkimVerdict(['fail', 'pass'])).toBe('pass');
    expect(dkimVerdict(['temperror', 'fail'])).toBe('fail');
    expect(dkimVerdict(['neutral', 'temperror'])).toBe('gray');
    expect(dkimVerdict(['permerror'])).toBe('processing_failed');
    expect(dkimVerdict([])).toBe('unknown');
  });
});
