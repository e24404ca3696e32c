import { describe, expect, it } from '@jest/globals';
import { RAW_EMAIL_BODY, rawBodyNeedsSlot } from './api-limits.ts';

describe('rawBodyNeedsSlot', () => {
  it('lets a body that declares a small length in at once', () => {
    expect(rawBodyNeedsSlot('2048')).toBe(false);
    expect(rawBodyNeedsSlot(String(RAW_EMAIL_BODY.unslottedBytes))).toBe(false);
  });

  it('makes a large body, and one of unknown or garbled length, wait for a slot', () => {
    expect(rawBodyNeedsSlot(String(RAW_EMAIL_BODY.unslottedBytes + 1))).toBe(true);
    expect(rawBodyNeedsSlot(undefined)).toBe(true);
    expect(rawBodyNeedsSlot('lots')).toBe(true);
  });
});
