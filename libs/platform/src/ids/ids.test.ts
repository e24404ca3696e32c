import { describe, expect, it } from '@jest/globals';
import { isUuid, newId, uuidv7Time } from './ids.ts';

describe('ids', () => {
  it('makes time-ordered UUIDv7 ids', () => {
    const a = newId();
    const b = newId();
    expect(isUuid(a)).toBe(true);
    expect(a < b).toBe(true);
    expect(Math.abs((uuidv7Time(a)?.getTime() ?? 0) - Date.now())).toBeLessThan(5000);
  });
  it('reads no time from a v4 id', () => {
    expect(uuidv7Time('1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b')).toBeUndefined();
  });
});
