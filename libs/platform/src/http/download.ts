import type { Request, Response } from 'express';

/** A file a key-less public link serves: its name, type and size, and its bytes unless only asked for its size. */
export type Download = { filename: string | null; contentType: string; size: number; content?: Buffer | null };

/**
 * Answers a public download link: GET with the bytes, HEAD with the size alone (the bytes were not read), as
 * an attachment (Content-Disposition built by express: RFC 6266 quoting, a non-ASCII name as filename*),
 * with the content type the file came with.
 */
export function sendDownload(req: Request, res: Response, download: Download): void {
  res.attachment(download.filename ?? undefined);
  // As the message carried it (res.type would add a charset to text types).
  res.setHeader('content-type', headerSafeType(download.contentType));
  if (req.method === 'HEAD') res.setHeader('content-length', String(download.size)).end();
  else res.send(download.content ?? Buffer.alloc(0));
}

/**
 * A content type as a header may carry it: a received part may name any type with any parameters, and Node
 * refuses a header with characters outside visible ASCII, so such a type goes out as its bare `type/subtype`.
 */
export function headerSafeType(type: string): string {
  if (/^[\t\x20-\x7e]*$/.test(type)) return type;
  const bare = type.split(';')[0]?.trim() ?? '';
  return /^[\x21-\x7e]+$/.test(bare) ? bare : 'application/octet-stream';
}
