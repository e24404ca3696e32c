import { describe, expect, it } from '@jest/globals';
import { headerEnd, parseRecords } from './csv-preview.ts';

describe('headerEnd', () => {
  it('ends the header after its line break, not at one inside quotes', () => {
    expect(headerEnd('a,b\r\n1,2')).toBe(5);
    expect(headerEnd('a,"b\nc"\n1,2')).toBe(8);
    expect(headerEnd('a,b')).toBe(3);
  });
});

describe('parseRecords', () => {
  it('reads quoted fields, doubled quotes, line breaks inside quotes and CRLF or LF between records', () => {
    const text = 'email,name,note\r\nada@example.com,"Lovelace, Ada","said ""hi""\ntwice"\ngrace@example.com,Grace,\n';
    expect(parseRecords(text, 10)).toEqual([
      ['email', 'name', 'note'],
      ['ada@example.com', 'Lovelace, Ada', 'said "hi"\ntwice'],
      ['grace@example.com', 'Grace', ''],
    ]);
  });

  it('stops at `max` records, skips blank lines, and leaves out a last record a cut may have ended', () => {
    expect(parseRecords('a\n\nb\nc\nd', 3)).toEqual([['a'], ['b'], ['c']]);
    expect(parseRecords('a,b\n1,2\n3,', 10, true)).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(parseRecords('a,b\n1,2\n3,', 10)).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['3', ''],
    ]);
  });
});
