import { describe, expect, it } from '@jest/globals';
import { createOpenedCache } from './opened-cache.ts';

describe('createOpenedCache', () => {
  it('opens each sealed value once', () => {
    let opens = 0;
    const open = createOpenedCache((sealed) => {
      opens++;
      return sealed.toUpperCase();
    }, 10);
    expect(open('a')).toBe('A');
    expect(open('a')).toBe('A');
    expect(open('b')).toBe('B');
    expect(opens).toBe(2);
  });

  it('caches nothing when opening throws, and empties itself when full', () => {
    let opens = 0;
    const open = createOpenedCache((sealed) => {
      opens++;
      if (sealed === 'bad') throw new Error('unreadable');
      return sealed;
    }, 2);
    expect(() => open('bad')).toThrow('unreadable');
    expect(() => open('bad')).toThrow('unreadable');
    open('a');
    open('b');
    open('c'); // full: emptied, then holds c
    open('c');
    open('a');
    expect(opens).toBe(2 + 4);
  });
});
