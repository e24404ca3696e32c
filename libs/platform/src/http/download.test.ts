import { describe, expect, it } from '@jest/globals';
import { headerSafeType } from './download.ts';

describe('headerSafeType', () => {
  it('keeps a type a header may carry, parameters and all', () => {
    expect(headerSafeType('text/plain; charset="utf-8"; name="a b.txt"')).toBe(
      'text/plain; charset="utf-8"; name="a b.txt"',
    );
  });

  it('drops parameters a header may not carry, and a type it may not carry at all', () => {
    expect(headerSafeType('application/pdf; name="résumé.pdf"')).toBe('application/pdf');
    expect(headerSafeType('imäge/png')).toBe('application/octet-stream');
  });
});
