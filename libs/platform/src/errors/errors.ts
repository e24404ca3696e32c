import type { ErrorBody, ErrorName } from '@postline/contracts';

/**
 * An error the API answers with as `{statusCode, name, message}`. Thrown at the edges (handlers,
 * validation); the one error middleware turns it into the response.
 */
export class ApiError extends Error {
  readonly statusCode: number;
  override readonly name: ErrorName;
  /** Extra response headers, e.g. `retry-after` on 429. */
  readonly headers: Record<string, string>;

  constructor(statusCode: number, name: ErrorName, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.statusCode = statusCode;
    this.name = name;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return { statusCode: this.statusCode, name: this.name, message: this.message };
  }
}

export function notFound(message = 'Not found'): ApiError {
  return new ApiError(404, 'not_found', message);
}

export function validationError(message: string, statusCode = 422): ApiError {
  return new ApiError(statusCode, 'validation_error', message);
}

export function missingField(field: string): ApiError {
  return new ApiError(422, 'missing_required_field', `Missing \`${field}\` field.`);
}

export function invalidParameter(message: string): ApiError {
  return new ApiError(422, 'invalid_parameter', message);
}

/** Postgres SQLSTATE of a driver error, for classifying by code rather than by message. */
export function pgCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export const PG_UNIQUE_VIOLATION = '23505';
