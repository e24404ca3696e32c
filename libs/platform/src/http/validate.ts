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
  // zod reports a missing enum field as invalid_value, a missing field of any other type as invalid_type.
  if (
    (issue?.code === 'invalid_type' || issue?.code === 'invalid_value') &&
    field !== '' &&
    valueAt(input, issue.path) === undefined
  ) {
    throw new ApiError(422, 'missing_required_field', `Missing \`${field}\` field.`);
  }
  const message = issue ? (field ? `Invalid \`${field}\`: ${issue.message}` : issue.message) : 'Invalid request';
  throw new ApiError(422, 'validation_error', message);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value: unknown = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
