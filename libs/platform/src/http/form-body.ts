import busboy from 'busboy';
import type { Request } from 'express';
import { ApiError } from '../errors/errors.ts';

/** How much of a form body is read: the declared size, the number of fields, and each field's length. */
export type FormBodyLimits = { maxBytes: number; maxFields: number; maxFieldBytes: number };

/**
 * The fields of an urlencoded or multipart/form-data body (the last of a name winning, files ignored, a
 * value past `maxFieldBytes` cut by busboy), for key-less pages that post plain HTML forms. Any other type
 * is a 415, a declared length past `maxBytes` a 413, a body busboy cannot read a 400.
 *
 * @example
 * const fields = await readFormBody(req, { maxBytes: 16 * 1024, maxFields: 20, maxFieldBytes: 2048 });
 */
export async function readFormBody(req: Request, limits: FormBodyLimits): Promise<Record<string, string>> {
  if (!req.is(['application/x-www-form-urlencoded', 'multipart/form-data'])) {
    throw new ApiError(
      415,
      'validation_error',
      'The body must be application/x-www-form-urlencoded or multipart/form-data.',
    );
  }
  if (Number(req.header('content-length') ?? 0) > limits.maxBytes) {
    throw new ApiError(413, 'validation_error', 'The request body is too large.');
  }
  const unreadable = () => new ApiError(400, 'validation_error', 'The form body could not be read.');
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let form: busboy.Busboy;
    try {
      form = busboy({
        headers: req.headers,
        limits: { fields: limits.maxFields, fieldSize: limits.maxFieldBytes, files: 0, parts: limits.maxFields },
      });
    } catch {
      reject(unreadable());
      return;
    }
    form.on('field', (name, value) => {
      fields[name] = value;
    });
    form.on('file', (_name, stream) => stream.resume());
    form.on('close', () => resolve(fields));
    form.on('error', () => reject(unreadable()));
    req.on('error', () => reject(new ApiError(400, 'validation_error', 'The request was aborted.')));
    req.pipe(form);
  });
}
