import type { z } from 'zod';
import { ApiError } from '../errors/errors.ts';

/**
 * Parses request input with a zod schema and turns the first issue into the API's error: a missing
 * required field is `missing_required_field`, anything else `validation_error` (422), naming the field.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.join('.') ?? '';
  if (issue?.code === 'invalid_type' && field !== '' && valueAt(input, issue.path) === undefined) {
    throw new ApiError(422, 'missing_required_field', `Missing \`${field}\` field.`);
  }
  const message = issue ? (field ? `Invalid \`${field}\`: ${issue.message}` : issue.message) : 'Invalid request';
  throw new ApiError(422, 'validation_error', message);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}
