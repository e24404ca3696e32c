import { describe, expect, it } from '@jest/globals';
import { unpairedSurrogateAt } from './app.ts';

describe('unpairedSurrogateAt', () => {
  it('names the first string holding half of a surrogate pair, at any depth', () => {
    expect(unpairedSurrogateAt({ subject: 'cut emoji \ud83d', html: 'ok' })).toBe('subject');
    expect(unpairedSurrogateAt([{ to: ['a@b.test'] }, { to: ['x@y.test', 'z\udc00@y.test'] }])).toBe('[1].to[1]');
    expect(unpairedSurrogateAt({ headers: { 'X-A': 'v', 'X-B': '\ud800x' } })).toBe('headers.X-B');
    expect(unpairedSurrogateAt({ ['k\ud800']: 1 })).toBe('<key>');
    expect(unpairedSurrogateAt('\udfff')).toBe('');
  });

  it('passes well-formed text, whole pairs included, and values that are not strings', () => {
    expect(
      unpairedSurrogateAt({ subject: 'Thanks 🎉', tags: [{ name: 'a', value: 'b' }], n: 1, b: true, z: null }),
    ).toBeUndefined();
    expect(
      unpairedSurrogateAt({ attachments: [{ content: Array.from({ length: 1000 }, (_, i) => i % 256) }] }),
    ).toBeUndefined();
    expect(unpairedSurrogateAt(undefined)).toBeUndefined();
  });

  it('walks deep nesting without recursion', () => {
    let deep: unknown = 'bad \ud83d';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unpairedSurrogateAt(deep)).toMatch(/^(\[0\]){100000}$/);
  });
});
