// The first rows of a CSV file as the import will read them (RFC 4180: quoted fields with "" for a quote and
// line breaks inside quotes, CRLF or LF between records), for the import's preview and column mapping. Only
// the file's beginning is read: the server reads the whole file.

/**
 * Up to `rows` records after the header, from the first `bytes` of the file, and the header record's length
 * in bytes (with its line break and any byte order mark), so that the file can be sent with another header.
 */
export async function previewCsv(
  file: Blob,
  rows = 5,
  bytes = 64 * 1024,
): Promise<{ header: string[]; rows: string[][]; headerBytes: number }> {
  const raw = await file.slice(0, bytes).text();
  const bom = raw.startsWith('\uFEFF') ? 3 : 0;
  const text = bom ? raw.slice(1) : raw;
  const records = parseRecords(text, rows + 1, file.size > bytes);
  const [header = [], ...rest] = records;
  const headerBytes = bom + new TextEncoder().encode(text.slice(0, headerEnd(text))).length;
  return { header: header.map((name) => name.trim()), rows: rest, headerBytes };
}

/** Where the first record of `text` ends: after its line break (CRLF, LF or CR) outside quotes. */
export function headerEnd(text: string): number {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '\r') return text[i + 1] === '\n' ? i + 2 : i + 1;
    else if (!quoted && c === '\n') return i + 1;
  }
  return text.length;
}

/** Records of `text`, at most `max`; with `cut`, a last record the cut may have ended early is left out. */
export function parseRecords(text: string, max: number, cut = false): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endRecord = () => {
    record.push(field);
    field = '';
    if (record.length > 1 || record[0] !== '') records.push(record);
    record = [];
  };
  while (i < text.length && records.length < max) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      endRecord();
      i++;
    } else if (c === '\n' || c === '\r') endRecord();
    else field += c;
    i++;
  }
  if (records.length < max && !cut && (field !== '' || record.length > 0)) endRecord();
  return records;
}
