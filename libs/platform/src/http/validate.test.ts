import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { parseInput } from './validate.ts';

const Body = z.object({ name: z.string(), kind: z.enum(['a', 'b']) });

describe('parseInput', () => {
  it('names a missing field of any type, an enum included, as missing_required_field', () => {
    expect(() => parseInput(Body, { kind: 'a' })).toThrow(
      expect.objectContaining({ name: 'missing_required_field', message: 'Missing `name` field.' }),
    );
    expect(() => parseInput(Body, { name: 'x' })).toThrow(
      expect.objectContaining({ name: 'missing_required_field', message: 'Missing `kind` field.' }),
    );
  });

  it('answers a present but wrong value with validation_error naming the field', () => {
    expect(() => parseInput(Body, { name: 'x', kind: 'c' })).toThrow(
      expect.objectContaining({
        name: 'validation_error',
        statusCode: 422,
        message: expect.stringContaining('`kind`'),
      }),
    );
  });
});
