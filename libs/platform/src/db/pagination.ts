import { sql, type SelectQueryBuilder } from 'kysely';
import { DEFAULT_PAGE_SIZE, type PaginationQuery } from '@postline/contracts';

export type Page<T> = { object: 'list'; has_more: boolean; data: T[] };

/**
 * Keyset pagination on a UUIDv7 id column, newest first. `after` is the id of the last item seen (older
 * items follow), `before` the id of the first item seen (newer items). The cursor item is excluded.
 * Without `limit`, a page holds DEFAULT_PAGE_SIZE items.
 *
 * @example
 * const page = await paginate(db.selectFrom('api_keys').selectAll().where('team_id', '=', teamId), query);
 */
export async function paginate<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  query: PaginationQuery,
  opts: { idColumn?: string } = {},
): Promise<Page<O>> {
  const id = sql.ref(opts.idColumn ?? 'id');
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  let q = qb;
  if (query.after !== undefined) q = q.where(sql<boolean>`${id} < ${query.after}`);
  if (query.before !== undefined) q = q.where(sql<boolean>`${id} > ${query.before}`);
  const ascending = query.before !== undefined;
  q = q.orderBy(id, ascending ? 'asc' : 'desc');
  q = q.limit(limit + 1);
  const rows = await q.execute();
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  if (ascending) data.reverse();
  return { object: 'list', has_more: hasMore, data };
}
