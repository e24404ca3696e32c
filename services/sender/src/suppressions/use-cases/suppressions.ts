// The team's suppression list: addresses we do not send to. Every change publishes suppression.added or
// suppression.removed in the same transaction; a temporary suppression (repeated transient bounces) has a
// scheduler timer that removes it.
import type { Kysely, Transaction } from 'kysely';
import type { PaginationQuery, SuppressionAdded, SuppressionOrigin } from '@postline/contracts';
import {
  enqueue,
  isUuid,
  notFound,
  timerMessage,
  validationError,
  type OutboxMessage,
  type Page,
} from '@postline/platform';
import type { SenderDb, SuppressionRow } from '../../db/schema.ts';
import {
  deleteSuppressions,
  findActiveSuppression,
  findActiveSuppressions,
  findExpiredSuppressionIds,
  findSuppressionByEmail,
  insertSuppression,
  listSuppressions,
  lockSuppressionForExpiry,
} from '../db/suppressions.ts';
import { listedAddress } from '../domain/suppressions.ts';

export type SuppressionDeps = { db: Kysely<SenderDb>; now: () => Date };

export function suppressionData(row: SuppressionRow): SuppressionAdded {
  return {
    id: row.id,
    email: row.email,
    origin: row.origin,
    source_id: row.source_id,
    created_at: row.created_at.toISOString(),
  };
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
    const expired = await findExpiredSuppressionIds(
      trx,
      teamId,
      entries.map((entry) => entry.email.toLowerCase()),
      now,
    );
    await removeSuppressions(trx, teamId, expired);
  }
  for (const entry of entries) {
    const email = entry.email.toLowerCase();
    const inserted = await insertSuppression(
      trx,
      teamId,
      { email, origin: entry.origin, sourceId: entry.sourceId, expiresAt: entry.expiresAt ?? null },
      now,
    );
    if (inserted) {
      out.push(inserted);
      messages.push({
        exchange: 'events',
        type: 'suppression.added',
        team_id: teamId,
        data: suppressionData(inserted),
      });
      if (inserted.expires_at) messages.push(expiryTimer(teamId, inserted.id, inserted.expires_at));
      continue;
    }
    const existing = await findSuppressionByEmail(trx, teamId, email);
    // The insert found the row in this transaction, and only a transaction that removes it could take it.
    if (!existing) throw new Error(`The suppression of ${email} is gone.`);
    out.push(existing);
  }
  await enqueue(trx, messages);
  return out;
}

/** Removes rows (by id) of the team and publishes suppression.removed for each one that was there. */
export async function removeSuppressions(
  trx: Transaction<SenderDb>,
  teamId: string,
  ids: readonly string[],
): Promise<SuppressionRow[]> {
  if (ids.length === 0) return [];
  const removed = await deleteSuppressions(trx, teamId, ids);
  await enqueue(
    trx,
    removed.flatMap((row): OutboxMessage[] => [
      { exchange: 'events', type: 'suppression.removed', team_id: teamId, data: suppressionData(row) },
      ...(row.expires_at
        ? [
            {
              exchange: 'commands',
              type: 'scheduler.cancel-timer',
              team_id: teamId,
              data: { key: expiryTimerKey(row.id) },
            } as OutboxMessage,
          ]
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
export async function expireSuppression(
  trx: Transaction<SenderDb>,
  teamId: string,
  suppressionId: string,
  now: Date,
): Promise<'removed' | 'kept' | 'rearmed'> {
  const row = await lockSuppressionForExpiry(trx, teamId, suppressionId, now);
  if (!row?.expires_at) return 'kept';
  if (row.early) {
    await enqueue(trx, [expiryTimer(teamId, row.id, row.expires_at)]);
    return 'rearmed';
  }
  await removeSuppressions(trx, teamId, [row.id]);
  return 'removed';
}

/** Adds addresses (listed form) to the team's list by hand (origin `manual`); returns the rows, in input order. */
export async function suppressAddresses(
  deps: SuppressionDeps,
  teamId: string,
  emails: readonly string[],
): Promise<SuppressionRow[]> {
  return deps.db.transaction().execute((trx) =>
    addSuppressions(
      trx,
      teamId,
      emails.map((email) => ({ email, origin: 'manual' as const, sourceId: null })),
      deps.now(),
    ),
  );
}

/** A page of the team's suppressions in force, of one origin when given. */
export async function pageOfSuppressions(
  deps: SuppressionDeps,
  teamId: string,
  origin: SuppressionOrigin | undefined,
  page: PaginationQuery,
): Promise<Page<SuppressionRow>> {
  return listSuppressions(deps.db, teamId, { origin, now: deps.now() }, page);
}

/**
 * Removes the team's suppressions in force named by these ids, or these (listed) addresses, and answers
 * for each key once, in the order first asked: the row's id (the key itself for an id that names none, null
 * for an address) and whether it was deleted.
 */
export async function removeNamedSuppressions(
  deps: SuppressionDeps,
  teamId: string,
  keys: { ids: readonly string[] } | { emails: readonly string[] },
): Promise<{ id: string | null; deleted: boolean }[]> {
  const idsGiven = 'ids' in keys;
  return deps.db.transaction().execute(async (trx) => {
    // Ids and addresses compare without case; each is answered once, in the order first asked.
    const wanted = [...new Set(('ids' in keys ? keys.ids : keys.emails).map((key) => key.toLowerCase()))];
    // Ids that are not UUIDs name nothing; they are reported as not deleted.
    // An expired temporary entry is no longer listed (GET answers 404): it is not deleted here either.
    const found = await findActiveSuppressions(
      trx,
      teamId,
      idsGiven ? { ids: wanted.filter(isUuid) } : { emails: wanted },
      deps.now(),
    );
    const removed = new Set(
      (
        await removeSuppressions(
          trx,
          teamId,
          found.map((row) => row.id),
        )
      ).map((row) => row.id),
    );
    const rowOfKey = new Map(found.map((row) => [idsGiven ? row.id.toLowerCase() : row.email, row]));
    return wanted.map((key) => {
      const row = rowOfKey.get(key);
      return { id: row?.id ?? (idsGiven ? key : null), deleted: row !== undefined && removed.has(row.id) };
    });
  });
}

/** The team's suppression in force named by `key`, or 404. */
export async function getSuppression(
  deps: SuppressionDeps,
  teamId: string,
  key: string | undefined,
): Promise<SuppressionRow> {
  const row = await findNamedSuppression(deps.db, teamId, key, deps.now());
  if (!row) throw notFound('Suppression not found');
  return row;
}

/** Removes the team's suppression in force named by `key` (suppression.removed), or 404. */
export async function deleteSuppression(
  deps: SuppressionDeps,
  teamId: string,
  key: string | undefined,
): Promise<SuppressionRow> {
  const removed = await deps.db.transaction().execute(async (trx) => {
    const row = await findNamedSuppression(trx, teamId, key, deps.now());
    if (!row) throw notFound('Suppression not found');
    return removeSuppressions(trx, teamId, [row.id]);
  });
  return removed[0] as SuppressionRow;
}

/** By id, or by address (the SDKs send an address raw in the path). */
async function findNamedSuppression(
  db: Kysely<SenderDb> | Transaction<SenderDb>,
  teamId: string,
  key: string | undefined,
  now: Date,
): Promise<SuppressionRow | undefined> {
  if (!key) return undefined;
  const isId = isUuid(key);
  if (!isId && !key.includes('@'))
    throw validationError('The suppression must be named by its id or its email address.');
  return findActiveSuppression(db, teamId, isId ? { id: key } : { email: listedAddress(key) }, now);
}
