import { ApiError } from '@postline/platform/pure';
import type { Refusal } from './domain/refusal.ts';

/** The public error of a domain refusal: a 422 with the refusal's name and message. */
export function refusalError(refusal: Refusal): ApiError {
  return new ApiError(422, refusal.name, refusal.message);
}
