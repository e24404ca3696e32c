import type { SMTPServerDataStream } from 'smtp-server';

/** A DATA stream's bytes, or undefined once past the size limit (the rest is read and dropped). */
export function readMessage(stream: SMTPServerDataStream): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      if (stream.sizeExceeded) return;
      chunks.push(chunk);
      bytes += chunk.length;
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(stream.sizeExceeded ? undefined : Buffer.concat(chunks, bytes)));
  });
}
