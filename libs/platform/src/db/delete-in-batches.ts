import { sql, type Kysely, type RawBuilder } from 'kysely';

/**
 * Deletes the rows of `table` that match `where`, `batch` at a time (each its own short statement, so no
 * long lock and no huge transaction), until fewer than `batch` went or `maxBatches` ran. Returns how
 * many rows went. Pruners of expired rows (idempotency keys) run it on an interval.
 *
 * @example
 * await deleteInBatches(db, 'idempotency_keys', sql`expires_at <= now()`);
 */
export async function deleteInBatches<DB>(
  db: Kysely<DB>,
  table: string,
  where: RawBuilder<unknown>,
  opts: { batch?: number; maxBatches?: number } = {},
): Promise<number> {
  const batch = opts.batch ?? 1000;
  const maxBatches = opts.maxBatches ?? 50;
  const target = sql.table(table);
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const result =
      await sql`delete from ${target} where ctid in (select ctid from ${target} where ${where} limit ${batch})`.execute(
        db,
      );
    const count = Number(result.numAffectedRows ?? 0n);
    deleted += count;
    if (count < batch) break;
  }
  return deleted;
}
