import { describe, expect, it } from '@jest/globals';
import { MAX_SHARE_TTL_MS, parseShareTtl } from './link-lifetimes.ts';

describe('parseShareTtl', () => {
  it("reads the reference's durations, 48 hours when absent", () => {
    expect(parseShareTtl('10m')).toEqual({ ok: true, ms: 600_000 });
    expect(parseShareTtl('2 hours')).toEqual({ ok: true, ms: 7_200_000 });
    expect(parseShareTtl('1 day')).toEqual({ ok: true, ms: 86_400_000 });
    expect(parseShareTtl(' 90 seconds ')).toEqual({ ok: true, ms: 90_000 });
    expect(parseShareTtl('48h')).toEqual({ ok: true, ms: MAX_SHARE_TTL_MS });
    expect(parseShareTtl(undefined)).toEqual({ ok: true, ms: MAX_SHARE_TTL_MS });
  });

  it('refuses anything else as a validation_error', () => {
    for (const bad of ['3 days', '49h', '0m', 'soon', '10', '1 week', '-5m', 10, true]) {
      expect(parseShareTtl(bad)).toMatchObject({ ok: false, refusal: { name: 'validation_error' } });
    }
  });
});
