// The team's suppression list: addresses we do not send to. Every change publishes suppression.added or
// suppression.removed in the same transaction; a temporary suppression (repeated transient bounces) has a
// scheduler timer that removes it.
import { sql, type Transaction } from 'kysely';
import type { SuppressionAdded, SuppressionOrigin } from '@postline/contracts';
import { enqueue, newId, timerMessage, type OutboxMessage } from '@postline/platform';
import type { SenderDb, SuppressionRow } from './db/schema.ts';

export function suppressionData(row: SuppressionRow): SuppressionAdded {
  return { id: row.id, email: row.email, origin: row.origin, source_id: row.source_id, created_at: row.created_at.toISOString() };
}

export function expiryTimerKey(id: string): string {
  return `suppression-expire:${id}`;
}

/** The scheduler timer that removes a temporary entry at its time (set again under the same key). */
function expiryTimer(teamId: string, id: string, expiresAt: Date): OutboxMessage {
  return timerMessage(teamId, expiryTimerKey(id), expiresAt, 'sender.expire-suppression', { suppression_id: id });
}

/**
 * Adds addresses to the team's list; an address already there is left as it is (and returned), except
 * that a permanent entry replaces a temporary one. A temporary entry past its time whose timer has not
 * removed it yet is removed first (suppression.removed), so that it does not stand in for the new entry.
 * Returns the rows, in input order.
 */
export async function addSuppressions(
  trx: Transaction<SenderDb>,
  teamId: string,
  entries: readonly { email: string; origin: SuppressionOrigin; sourceId: string | null; expiresAt?: Date | null }[],
  now: Date,
): Promise<SuppressionRow[]> {
  const out: SuppressionRow[] = [];
  const messages: OutboxMessage[] = [];
  if (entries.length > 0) {
    const expired = await trx
      .selectFrom('suppressions')
      .select('id')
      .where('team_id', '=', teamId)
      .where('email', 'in', entries.map((e) => e.email.toLowerCase()))
      .where('expires_at', '<=', now)
      .execute();
    await removeSuppressions(trx, teamId, expired.map((r) => r.id));
  }
  for (const entry of entries) {
    const email = entry.email.toLowerCase();
    const expiresAt = entry.expiresAt ?? null;
    const inserted = await trx
      .insertInto('suppressions')
      .values({ id: newId(), team_id: teamId, email, origin: entry.origin, source_id: entry.sourceId, expires_at: expiresAt, created_at: now })
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
    if (inserted) {
      out.push(inserted);
      messages.push({ exchange: 'events', type: 'suppression.added', team_id: teamId, data: suppressionData(inserted) });
      if (inserted.expires_at) messages.push(expiryTimer(teamId, inserted.id, inserted.expires_at));
      continue;
    }
    const existing = await trx
      .selectFrom('suppressions')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    out.push(existing);
  }
  await enqueue(trx, messages);
  return out;
}

/** Removes rows (by id) of the team and publishes suppression.removed for each one that was there. */
export async function removeSuppressions(trx: Transaction<SenderDb>, teamId: string, ids: readonly string[]): Promise<SuppressionRow[]> {
  if (ids.length === 0) return [];
  const removed = await trx.deleteFrom('suppressions').where('team_id', '=', teamId).where('id', 'in', ids).returningAll().execute();
  await enqueue(
    trx,
    removed.flatMap((row): OutboxMessage[] => [
      { exchange: 'events', type: 'suppression.removed', team_id: teamId, data: suppressionData(row) },
      ...(row.expires_at
        ? [{ exchange: 'commands', type: 'scheduler.cancel-timer', team_id: teamId, data: { key: expiryTimerKey(row.id) } } as OutboxMessage]
        : []),
    ]),
  );
  return removed;
}

/**
 * A temporary entry's expiry timer fired: the entry leaves the list (suppression.removed), unless it is gone
 * or was made permanent meanwhile. A timer early by more than a second by both our clock and the
 * database's (by which the scheduler fires) is set again for the entry's time rather than dropped, which
 * would keep the entry forever; a clock of ours behind the database's cannot make it fire again and again.
 */
export async function expireSuppression(trx: Transaction<SenderDb>, teamId: string, suppressionId: string, now: Date): Promise<'removed' | 'kept' | 'rearmed'> {
  const row = await trx
    .selectFrom('suppressions')
    .select(['id', 'expires_at', sql<boolean>`expires_at > greatest(now(), ${now}::timestamptz) + interval '1 second'`.as('early')])
    .where('team_id', '=', teamId)
    .where('id', '=', suppressionId)
    .forUpdate()
    .executeTakeFirst();
  if (!row?.expires_at) return 'kept';
  if (row.early) {
    await enqueue(trx, [expiryTimer(teamId, row.id, row.expires_at)]);
    return 'rearmed';
  }
  await removeSuppressions(trx, teamId, [row.id]);
  return 'removed';
}
