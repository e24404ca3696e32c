import type { ErrorName } from '@postline/contracts';

/**
 * Why the domain refuses an input: the name and message of the public error it becomes. A domain refusal
 * is always a 422; the use case turns it into that error.
 */
export type Refusal = {
  name: Extract<ErrorName, 'validation_error' | 'missing_required_field' | 'invalid_parameter' | 'invalid_attachment'>;
  message: string;
};
