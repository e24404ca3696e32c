import { z } from 'zod';

/** Keyset cursor: the id of an item of the list (UUID). */
const Cursor = z.string().uuid({ message: 'The cursor must be a valid id.' });

/**
 * Query parameters every list accepts. `limit` 1–100 (default 20 everywhere);
 * `after` and `before` are ids; both together are refused.
 */
export const PaginationQuery = z
  .object({
    limit: z.coerce
      .number({ message: 'The pagination limit must be a number between 1 and 100.' })
      .int({ message: 'The pagination limit must be a number between 1 and 100.' })
      .min(1, { message: 'The pagination limit must be a number between 1 and 100.' })
      .max(100, { message: 'The pagination limit must be a number between 1 and 100.' })
      .optional(),
    after: Cursor.optional(),
    before: Cursor.optional(),
  })
  .refine((q) => !(q.after !== undefined && q.before !== undefined), {
    message: 'The `after` and `before` parameters cannot be used together.',
  });
export type PaginationQuery = z.infer<typeof PaginationQuery>;

export const DEFAULT_PAGE_SIZE = 20;

/** The list envelope of every list endpoint: newest first. */
export function ListEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ object: z.literal('list'), has_more: z.boolean(), data: z.array(item) });
}
export type ListEnvelope<T> = { object: 'list'; has_more: boolean; data: T[] };
