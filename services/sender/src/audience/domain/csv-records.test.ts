import { describe, expect, it } from '@jest/globals';
import { csvHeader, CsvFileError, csvRecords, type CsvRecord } from './csv-records.ts';

async function all(file: Buffer, offset: number): Promise<CsvRecord[]> {
  const records: CsvRecord[] = [];
  for await (const record of csvRecords(file, offset)) records.push(record);
  return records;
}

// A byte order mark, CRLF, LF and CR mixed, multi-byte characters, quoted values with line endings and
// doubled quotes, empty lines, and no line ending at the end.
const FILE = Buffer.from(
  '\uFEFFemail,name,note\r\na@x.com,Zoë,"multi\nline ""q"""\r\nb@x.com,Ünï,plain\n\nc@x.com,"c,c",\r\r\nd@x.com,d,"x\r\ny"\re@x.com,e,end',
  'utf8',
);

describe('csvRecords', () => {
  it('gives each record with the byte offset where the next one starts', async () => {
    const records = await all(FILE, 0);
    expect(records.map((record) => record.values)).toEqual([
      ['email', 'name', 'note'],
      ['a@x.com', 'Zoë', 'multi\nline "q"'],
      ['b@x.com', 'Ünï', 'plain'],
      ['c@x.com', 'c,c', ''],
      ['d@x.com', 'd', 'x\r\ny'],
      ['e@x.com', 'e', 'end'],
    ]);
    expect(FILE.subarray(records[0]!.end).toString('utf8').startsWith('a@x.com,Zoë')).toBe(true);
    expect(records.at(-1)!.end).toBe(FILE.length);
  });

  it('resumes at any of those offsets with exactly the records that follow', async () => {
    const records = await all(FILE, 0);
    for (const [index, record] of records.entries()) {
      expect(await all(FILE, record.end)).toEqual(records.slice(index + 1));
    }
  });

  it('gives the same offsets when records cross the slices the parser is fed (a long file)', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `u${i}@x.com,"name ${i}\nsecond line ✓",${i}`);
    const file = Buffer.from(`email,name,n\n${rows.join('\n')}\n`, 'utf8');
    const records = await all(file, 0);
    expect(records).toHaveLength(3001);
    const middle = records[1234]!;
    const resumed = await all(file, middle.end);
    expect(resumed[0]!.values[0]).toBe('u1234@x.com');
    expect(resumed).toEqual(records.slice(1235));
  });

  it('throws a CsvFileError for a quote never closed', async () => {
    const file = Buffer.from('email,name\na@x.com,ok\nb@x.com,"never closed\nc@x.com,x\n');
    await expect(all(file, 0)).rejects.toThrow(
      new CsvFileError('The file is not valid CSV: a quoted value is never closed.'),
    );
  });

  it('keeps a stray quote inside an unquoted value', async () => {
    const records = await all(Buffer.from('email,name\na@x.com,O"Brien\n'), 0);
    expect(records[1]!.values).toEqual(['a@x.com', 'O"Brien']);
  });
});

describe('csvHeader', () => {
  it('gives the trimmed column names and where the rows start', async () => {
    expect(await csvHeader(Buffer.from('\uFEFF email , First Name\na@x.com,A\n'))).toEqual({
      ok: true,
      columns: ['email', 'First Name'],
      end: 23,
    });
  });

  it('refuses an empty file', async () => {
    expect(await csvHeader(Buffer.alloc(0))).toEqual({
      ok: false,
      reason: 'The file is empty: it needs a header row naming its columns.',
    });
    expect(await csvHeader(Buffer.from('\n\n'))).toMatchObject({ ok: false });
  });
});
