// The team's suppression list: addresses we do not send to, permanently or until `expires_at`.
import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { PaginationQuery, SuppressionOrigin } from '@postline/contracts';
import { newId, paginate, type Page } from '@postline/platform';
import type { SenderDb, SuppressionRow } from '../../db/schema.ts';

/** A suppression still in force: permanent, or temporary and not yet expired. */
function active(now: Date) {
  return (eb: ExpressionBuilder<SenderDb, 'suppressions'>) =>
    eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]);
}

/** A page of the team's suppressions in force, of one origin when given. */
export async function listSuppressions(
  db: Kysely<SenderDb>,
  teamId: string,
  filter: { origin: SuppressionOrigin | undefined; now: Date },
  page: PaginationQuery,
): Promise<Page<SuppressionRow>> {
  let query = db.selectFrom('suppressions').selectAll().where('team_id', '=', teamId).where(active(filter.now));
  if (filter.origin) query = query.where('origin', '=', filter.origin);
  return paginate(query, page);
}

/** The team's suppression in force named by its id or by its (listed) address. */
export async function findActiveSuppression(
  db: Kysely<SenderDb> | Transaction<SenderDb>,
  teamId: string,
  key: { id: string } | { email: string },
  now: Date,
): Promise<SuppressionRow | undefined> {
  return db
    .selectFrom('suppressions')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id' in key ? 'id' : 'email', '=', 'id' in key ? key.id : key.email)
    .where(active(now))
    .executeTakeFirst();
}

/** The team's suppressions in force among these ids, or these (listed) addresses. */
export async function findActiveSuppressions(
  trx: Transaction<SenderDb>,
  teamId: string,
  keys: { ids: readonly string[] } | { emails: readonly string[] },
  now: Date,
): Promise<SuppressionRow[]> {
  const ids = 'ids' in keys;
  const wanted = 'ids' in keys ? keys.ids : keys.emails;
  if (wanted.length === 0) return [];
  return trx
    .selectFrom('suppressions')
    .selectAll()
    .where('team_id', '=', teamId)
    .where(ids ? 'id' : 'email', 'in', wanted)
    .where(active(now))
    .execute();
}

/** The ids of the team's temporary entries for these (lower-case) addresses that are past their time. */
export async function findExpiredSuppressionIds(
  trx: Transaction<SenderDb>,
  teamId: string,
  emails: readonly string[],
  now: Date,
): Promise<string[]> {
  const rows = await trx
    .selectFrom('suppressions')
    .select('id')
    .where('team_id', '=', teamId)
    .where('email', 'in', emails)
    .where('expires_at', '<=', now)
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Lists a (lower-case) address unless the team lists it already, except that a permanent entry
 * (`expiresAt` null) replaces a temporary one. Returns the row written, or undefined when the existing one
 * stands.
 */
export async function insertSuppression(
  trx: Transaction<SenderDb>,
  teamId: string,
  entry: { email: string; origin: SuppressionOrigin; sourceId: string | null; expiresAt: Date | null },
  now: Date,
): Promise<SuppressionRow | undefined> {
  const { email, expiresAt } = entry;
  return trx
    .insertInto('suppressions')
    .values({
      id: newId(),
      team_id: teamId,
      email,
      origin: entry.origin,
      source_id: entry.sourceId,
      expires_at: expiresAt,
      created_at: now,
    })
    .onConflict((oc) =>
      // Only a permanent entry upgrades a temporary one; otherwise the existing row stands.
      expiresAt === null
        ? oc
            .columns(['team_id', 'email'])
            .doUpdateSet({ expires_at: null, origin: entry.origin, source_id: entry.sourceId })
            .where('suppressions.expires_at', 'is not', null)
        : oc.columns(['team_id', 'email']).doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** The team's entry for a (lower-case) address, whatever its state. */
export async function findSuppressionByEmail(
  trx: Transaction<SenderDb>,
  teamId: string,
  email: string,
): Promise<SuppressionRow | undefined> {
  return trx
    .selectFrom('suppressions')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('email', '=', email)
    .executeTakeFirst();
}

/** Deletes the team's rows of these ids; returns those that were there. */
export async function deleteSuppressions(
  trx: Transaction<SenderDb>,
  teamId: string,
  ids: readonly string[],
): Promise<SuppressionRow[]> {
  return trx.deleteFrom('suppressions').where('team_id', '=', teamId).where('id', 'in', ids).returningAll().execute();
}

/**
 * Row-locks one entry of the team, with whether it is early: its time is more than a second ahead of both
 * our clock (`now`) and the database's (by which the scheduler fires).
 */
export async function lockSuppressionForExpiry(
  trx: Transaction<SenderDb>,
  teamId: string,
  id: string,
  now: Date,
): Promise<{ id: string; expires_at: Date | null; early: boolean } | undefined> {
  return trx
    .selectFrom('suppressions')
    .select([
      'id',
      'expires_at',
      sql<boolean>`expires_at > greatest(now(), ${now}::timestamptz) + interval '1 second'`.as('early'),
    ])
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}
