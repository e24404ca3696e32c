import busboy from 'busboy';
import type { Request } from 'express';
import { UNSUBSCRIBE_BODY_LIMIT_BYTES } from '@postline/contracts';
import { ApiError, validationError } from '@postline/platform';

/** Fields a hosted form posts (a handful), with room to spare; longer values are cut by busboy's limit. */
const MAX_FIELDS = 20;
const MAX_FIELD_BYTES = 2048;

/**
 * The fields of a hosted form's urlencoded or multipart/form-data body (the last of a name winning, files
 * ignored), at most the public links' body limit (the gateway stops a larger one first).
 */
export async function readFormBody(req: Request): Promise<Record<string, string>> {
  if (!req.is(['application/x-www-form-urlencoded', 'multipart/form-data'])) {
    throw new ApiError(
      415,
      'validation_error',
      'The body must be application/x-www-form-urlencoded or multipart/form-data.',
    );
  }
  if (Number(req.header('content-length') ?? 0) > UNSUBSCRIBE_BODY_LIMIT_BYTES) {
    throw new ApiError(413, 'validation_error', 'The request body is too large.');
  }
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let form: busboy.Busboy;
    try {
      form = busboy({
        headers: req.headers,
        limits: { fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, files: 0, parts: MAX_FIELDS },
      });
    } catch {
      reject(new ApiError(400, 'validation_error', 'The form body could not be read.'));
      return;
    }
    form.on('field', (name, value) => {
      fields[name] = value;
    });
    form.on('file', (_name, stream) => stream.resume());
    form.on('close', () => resolve(fields));
    form.on('error', () => reject(validationError('The form body could not be read.', 400)));
    req.on('error', () => reject(new ApiError(400, 'validation_error', 'The request was aborted.')));
    req.pipe(form);
  });
}
