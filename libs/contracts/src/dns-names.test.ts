import { describe, expect, it } from '@jest/globals';
import { normalizeHostName } from './dns-names.ts';

describe('normalizeHostName', () => {
  it('lowers a host name and drops the root dot', () => {
    expect(normalizeHostName('Links.Example.COM.')).toBe('links.example.com');
    expect(normalizeHostName('a-1.b.example.co.uk')).toBe('a-1.b.example.co.uk');
  });

  it('refuses what is not a host name of two or more labels', () => {
    const junk = ['', '.', 'localhost', 'a..b', '-a.example.com', 'a_b.example.com', 'example.com:443', '[::1]'];
    for (const value of [...junk, '127.0.0.1', '10.0.0.1.', `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}com`]) {
      expect([value, normalizeHostName(value)]).toEqual([value, undefined]);
    }
  });
});
