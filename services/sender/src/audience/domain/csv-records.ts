import { Readable } from 'node:stream';
import { CsvError, parse, type Options } from 'csv-parse';

// Reading a stored CSV file record by record with the byte offset where each record ends, so that an
// import can commit its progress as an offset and a restarted import resume exactly at a record boundary
// (quoted fields may hold newlines, so a line is not a record). csv-parse counts bytes of the original
// buffer, a byte order mark included; the tests of this file pin that.

/** One record: its values as written, and the byte offset just after it (where the next one starts). */
export type CsvRecord = { values: string[]; end: number };

export type CsvHeader = { ok: true; columns: string[]; end: number } | { ok: false; reason: string };

/** A record longer than this is refused (an unclosed quote would otherwise read the rest of the file). */
const MAX_RECORD_BYTES = 1024 * 1024;
/** Bytes handed to the parser at a time, so that only that many are parsed ahead of the records read. */
const SLICE_BYTES = 64 * 1024;

const OPTIONS: Options = {
  // A file saved by a spreadsheet often starts with one.
  bom: true,
  // Every line ending ends a record, not the first one seen: detecting it would depend on where the
  // parsing starts, and a file whose endings are mixed would then resume differently than it began.
  record_delimiter: ['\r\n', '\n', '\r'],
  skip_empty_lines: true,
  // A row's number of values is checked against the header by the import, which fails that row alone.
  relax_column_count: true,
  // A stray quote inside an unquoted value is kept as a character rather than making the file unreadable.
  relax_quotes: true,
  max_record_size: MAX_RECORD_BYTES,
  info: true,
};

/**
 * The records of `file` from byte `offset` (a record boundary: 0 or an `end` this function returned), in
 * order. Throws a `CsvFileError` where the file cannot be read as CSV.
 */
export async function* csvRecords(file: Buffer, offset: number): AsyncGenerator<CsvRecord> {
  const parser = Readable.from(slices(file, offset)).pipe(parse(OPTIONS));
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
      yield { values: item.record, end: offset + item.info.bytes };
    }
  } catch (err) {
    if (err instanceof CsvError) throw new CsvFileError(describeCsvError(err));
    throw err;
  } finally {
    parser.destroy();
  }
}

/** The header: the first record's values, trimmed, and where the data rows start. */
export async function csvHeader(file: Buffer): Promise<CsvHeader> {
  try {
    for await (const record of csvRecords(file, 0)) {
      return { ok: true, columns: record.values.map((value) => value.trim()), end: record.end };
    }
  } catch (err) {
    if (err instanceof CsvFileError) return { ok: false, reason: err.message };
    throw err;
  }
  return { ok: false, reason: 'The file is empty: it needs a header row naming its columns.' };
}

/** Why a file cannot be read as CSV, in words for the import's record. */
export class CsvFileError extends Error {
  override name = 'CsvFileError';
}

/** Our words for the errors a file can cause; csv-parse's own message (with its line numbers) for the rest. */
const CSV_ERROR_TEXT: Partial<Record<CsvError['code'], string>> = {
  CSV_QUOTE_NOT_CLOSED: 'a quoted value is never closed',
  CSV_MAX_RECORD_SIZE: `a row is longer than ${MAX_RECORD_BYTES / 1024 / 1024} MB (an unclosed quote?)`,
};

function describeCsvError(err: CsvError): string {
  return `The file is not valid CSV: ${CSV_ERROR_TEXT[err.code] ?? err.message.replace(/\.$/, '')}.`;
}

function* slices(file: Buffer, offset: number): Generator<Buffer> {
  for (let start = offset; start < file.length; start += SLICE_BYTES) yield file.subarray(start, start + SLICE_BYTES);
}
