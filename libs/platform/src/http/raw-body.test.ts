import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../errors/errors.ts';
import { readRawBody } from './raw-body.ts';

const LIMIT = { limitBytes: 8, tooLargeMessage: 'too large' };

function request(chunks: string[], headers: Record<string, string> = {}): IncomingMessage {
  return Object.assign(Readable.from(chunks.map((c) => Buffer.from(c))), { headers }) as unknown as IncomingMessage;
}

describe('readRawBody', () => {
  it('reads the body whole, byte for byte', async () => {
    expect((await readRawBody(request(['ab', 'cd', 'efgh']), LIMIT)).toString()).toBe('abcdefgh');
  });

  it('refuses a declared length over the limit without reading, and a body that grows past it, with a 413 that closes', async () => {
    for (const req of [request([], { 'content-length': '9' }), request(['abcde', 'fghi'])]) {
      const err = await readRawBody(req, LIMIT).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ statusCode: 413, name: 'validation_error', message: 'too large' });
      expect((err as ApiError).headers).toEqual({ connection: 'close' });
    }
  });
});
