// A page of a list that is read whole (a broadcast's clicked links: few, ordered by their counts, so no
// keyset can page them in SQL), with the paging of every list: `after` (the items that follow an item)
// or `before` (those that precede it), `limit` of them.

/**
 * The page of `items` (in their order) that `query` names. A cursor that names no item gives an empty page.
 *
 * @example
 * pageOfList([{ id: 'a' }, { id: 'b' }, { id: 'c' }], { limit: 1, after: 'a' }, 20); // { data: [{ id: 'b' }], hasMore: true }
 */
export function pageOfList<T extends { id: string }>(
  items: readonly T[],
  query: { limit?: number | undefined; after?: string | undefined; before?: string | undefined },
  defaultLimit: number,
): { data: T[]; hasMore: boolean } {
  const limit = query.limit ?? defaultLimit;
  if (query.before !== undefined) {
    const end = items.findIndex((item) => item.id === query.before);
    if (end < 0) return { data: [], hasMore: false };
    const start = Math.max(0, end - limit);
    return { data: items.slice(start, end), hasMore: start > 0 };
  }
  let start = 0;
  if (query.after !== undefined) {
    start = items.findIndex((item) => item.id === query.after) + 1;
    if (start === 0) return { data: [], hasMore: false };
  }
  return { data: items.slice(start, start + limit), hasMore: start + limit < items.length };
}
