// The report files a DMARC report message carries: its attachments (and a whole message whose single part is
// the report), each a plain XML file, a gzip file or a zip archive of XML files, told apart by their first
// bytes rather than by what their Content-Type claims (reporters send `application/gzip`,
// `application/x-gzip`, `application/zip`, `application/x-zip-compressed`, `application/octet-stream` and
// `text/xml` alike). Pure: the attachments come in as bytes.
//
// Decompression is fflate's streaming gunzip and unzip, fed small slices so that no single step can produce
// more than about a thousand times its input (deflate's ceiling), and stopped as soon as a file's output
// passes the cap: a zip bomb costs at most the cap in memory and a few milliseconds, whatever sizes its
// headers declare.
import { Gunzip, Unzip, UnzipInflate, type UnzipFile } from 'fflate';
import type { ParsedAttachment } from './received-message.ts';

export type ReportFileLimits = {
  /** The largest XML file taken once decompressed, in bytes. */
  maxReportBytes: number;
  /** Report files read from one message at most (the rest are refused as `too_many_files`). */
  maxFiles: number;
  /**
   * The decompressed bytes kept of one message's files together: past it the next files are `too_large`, so
   * that many small bombs in one message cost this, not `maxFiles` × `maxReportBytes`.
   */
  maxTotalBytes: number;
};

export type FileRefusal = 'too_large' | 'malformed' | 'too_many_files';

/** One report file found in a message: its XML, or why it could not be read. */
export type ReportFile = { name: string } & (
  | { ok: true; xml: string }
  | { ok: false; reason: FileRefusal; detail: string }
);

/** Input slice fed to the inflater at once: bounds one step's output to about 1,032 × this. */
const SLICE = 4096;

/**
 * The report files among a message's attachments. An attachment that is neither XML, gzip nor zip is
 * skipped unless its type or name says it is a report (then it is `malformed`).
 */
export function reportFilesOf(attachments: readonly ParsedAttachment[], limits: ReportFileLimits): ReportFile[] {
  const files: ReportFile[] = [];
  let total = 0;
  const push = (file: ReportFile) => {
    if (files.filter((f) => f.ok || f.reason !== 'too_many_files').length >= limits.maxFiles) {
      files.push({
        name: file.name,
        ok: false,
        reason: 'too_many_files',
        detail: `more than ${limits.maxFiles} report files`,
      });
    } else if (file.ok && total + file.xml.length > limits.maxTotalBytes) {
      files.push({
        name: file.name,
        ok: false,
        reason: 'too_large',
        detail: `past ${limits.maxTotalBytes} bytes in one message`,
      });
    } else {
      if (file.ok) total += file.xml.length;
      files.push(file);
    }
  };
  attachments.forEach((attachment, i) => {
    const name = attachment.filename ?? `part ${i + 1}`;
    const kind = kindOf(attachment.content);
    if (kind === 'gzip') push(gunzipped(name, attachment.content, limits));
    else if (kind === 'zip') for (const file of unzipped(name, attachment.content, limits)) push(file);
    else if (kind === 'xml') {
      push(
        attachment.content.length > limits.maxReportBytes
          ? tooLarge(name, limits)
          : { name, ok: true, xml: utf8(attachment.content) },
      );
    } else if (claimsReport(attachment)) {
      push({ name, ok: false, reason: 'malformed', detail: 'neither XML, gzip nor zip' });
    }
  });
  return files;
}

function kindOf(content: Buffer): 'gzip' | 'zip' | 'xml' | undefined {
  if (content[0] === 0x1f && content[1] === 0x8b) return 'gzip';
  if (content[0] === 0x50 && content[1] === 0x4b && content[2] === 0x03 && content[3] === 0x04) return 'zip';
  // A UTF-8 byte order mark, then white space, then `<`.
  const start = content
    .subarray(0, 256)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  return start.startsWith('<') ? 'xml' : undefined;
}

function claimsReport(attachment: ParsedAttachment): boolean {
  return /(gzip|zip|xml)/i.test(attachment.contentType) || /\.(xml|gz|gzip|zip)$/i.test(attachment.filename ?? '');
}

function gunzipped(name: string, content: Buffer, limits: ReportFileLimits): ReportFile {
  const xmlName = name.replace(/\.gz(ip)?$/i, '');
  const chunks: Uint8Array[] = [];
  let size = 0;
  let over = false;
  let done = false;
  const gunzip = new Gunzip((data, final) => {
    if (over) return;
    size += data.length;
    if (size > limits.maxReportBytes) over = true;
    else chunks.push(data);
    if (final) done = true;
  });
  try {
    for (let at = 0; at < content.length && !over && !done; at += SLICE) {
      gunzip.push(content.subarray(at, at + SLICE), at + SLICE >= content.length);
    }
  } catch (err) {
    return malformed(xmlName, err);
  }
  if (over) return tooLarge(xmlName, limits);
  if (!done) return { name: xmlName, ok: false, reason: 'malformed', detail: 'gzip: truncated' };
  return { name: xmlName, ok: true, xml: utf8(Buffer.concat(chunks)) };
}

function unzipped(name: string, content: Buffer, limits: ReportFileLimits): ReportFile[] {
  const entries: { file: UnzipFile; chunks: Uint8Array[]; size: number; done: boolean; result?: ReportFile }[] = [];
  const unzip = new Unzip((file) => {
    if (file.name.endsWith('/')) return; // a directory
    const entry: (typeof entries)[number] = { file, chunks: [], size: 0, done: false };
    entries.push(entry);
    // More entries than a message may carry: each is refused without being inflated.
    if (entries.length > limits.maxFiles) {
      entry.result = {
        name: file.name,
        ok: false,
        reason: 'too_many_files',
        detail: `more than ${limits.maxFiles} files`,
      };
      return;
    }
    file.ondata = (err, data, final) => {
      if (entry.result) return;
      if (err) {
        entry.result = malformed(file.name, err);
        return;
      }
      entry.size += data.length;
      if (entry.size > limits.maxReportBytes) {
        entry.result = tooLarge(file.name, limits);
        entry.chunks = [];
        file.terminate();
        return;
      }
      entry.chunks.push(data);
      if (final) entry.done = true;
    };
    try {
      file.start();
    } catch (err) {
      entry.result = malformed(file.name, err);
    }
  });
  unzip.register(UnzipInflate);
  try {
    for (let at = 0; at < content.length; at += SLICE) {
      unzip.push(content.subarray(at, at + SLICE), at + SLICE >= content.length);
    }
  } catch (err) {
    // What was read in full before the damage stands; the rest of the archive is one malformed file.
    const read = entries.filter((entry) => entry.result || entry.done);
    return [...read.map(resultOf), malformed(name, err)];
  }
  if (entries.length === 0) return [{ name, ok: false, reason: 'malformed', detail: 'zip: no file in the archive' }];
  return entries.map(resultOf);
}

function resultOf(entry: { file: UnzipFile; chunks: Uint8Array[]; done: boolean; result?: ReportFile }): ReportFile {
  if (entry.result) return entry.result;
  if (!entry.done) return { name: entry.file.name, ok: false, reason: 'malformed', detail: 'zip: truncated' };
  return { name: entry.file.name, ok: true, xml: utf8(Buffer.concat(entry.chunks)) };
}

function tooLarge(name: string, limits: ReportFileLimits): ReportFile {
  return { name, ok: false, reason: 'too_large', detail: `more than ${limits.maxReportBytes} bytes once decompressed` };
}

function malformed(name: string, err: unknown): ReportFile {
  return { name, ok: false, reason: 'malformed', detail: err instanceof Error ? err.message : String(err) };
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}
