import { describe, expect, it } from '@jest/globals';
import { normalizeLineEndings } from './line-endings.ts';

const norm = (s: string) => normalizeLineEndings(Buffer.from(s, 'latin1')).toString('latin1');

describe('normalizeLineEndings', () => {
  it('returns the same buffer when every line ends in CRLF', () => {
    const raw = Buffer.from('Subject: a\r\n\r\nbody\r\n');
    expect(normalizeLineEndings(raw)).toBe(raw);
  });

  it('turns bare LF and bare CR into CRLF, keeping CRLF as it is', () => {
    expect(norm('a\nb\rc\r\nd')).toBe('a\r\nb\r\nc\r\nd');
    expect(norm('\r\r\n\n')).toBe('\r\n\r\n\r\n');
    expect(norm('end\r')).toBe('end\r\n');
  });

  it('makes the smuggling payloads plain lines of one message', () => {
    // <LF>.<CR><LF> and <LF>.<LF>: a dot line only once normalised, inside the one DATA smtp-server read.
    expect(norm('hi\n.\r\nMAIL FROM:<evil@x>\r\n')).toBe('hi\r\n.\r\nMAIL FROM:<evil@x>\r\n');
    expect(norm('hi\n.\nRCPT TO:<v@x>\n')).toBe('hi\r\n.\r\nRCPT TO:<v@x>\r\n');
  });
});
