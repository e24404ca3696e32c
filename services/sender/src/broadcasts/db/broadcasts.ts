// Broadcasts: their rows, and the statements that move one through its states (draft, scheduled, queued,
// sent, canceled, and awaiting_approval). The fan-out's page statements are in broadcast-recipients.ts.
import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import type { BroadcastRow, BroadcastStatus, BroadcastsTable, SenderDb } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** The fields a request may set on a draft (or, after sending, `name` alone). */
export type BroadcastFields = Omit<
  Updateable<BroadcastsTable>,
  | 'id'
  | 'team_id'
  | 'status'
  | 'scheduled_at'
  | 'sent_at'
  | 'fan_out_after'
  | 'created_at'
  | 'approval_requested_by'
  | 'approval_requested_at'
  | 'approval_scheduled_at'
  | 'rejected_by'
  | 'rejected_at'
  | 'rejection_reason'
>;

export async function insertBroadcast(db: Db, row: Insertable<BroadcastsTable>): Promise<BroadcastRow> {
  return db.insertInto('broadcasts').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findBroadcast(db: Db, teamId: string, id: string): Promise<BroadcastRow | undefined> {
  return db.selectFrom('broadcasts').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

/** Row-locks one broadcast of the team (every change of state takes this lock first). */
export async function lockBroadcast(
  trx: Transaction<SenderDb>,
  teamId: string,
  id: string,
): Promise<BroadcastRow | undefined> {
  return trx
    .selectFrom('broadcasts')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** A page of the team's broadcasts, newest first (no `limit`: all of them). */
/** A page of the team's broadcasts, newest first; in one status when `status` is given. */
export async function listBroadcasts(
  db: Db,
  teamId: string,
  query: PaginationQuery,
  status?: BroadcastStatus,
): Promise<Page<BroadcastRow>> {
  const all = db.selectFrom('broadcasts').selectAll().where('team_id', '=', teamId);
  return paginate(status === undefined ? all : all.where('status', '=', status), query);
}

/** Sets fields and state of a locked broadcast of the team (a change with no field writes nothing). */
export async function updateBroadcast(
  trx: Transaction<SenderDb>,
  teamId: string,
  id: string,
  change: Updateable<BroadcastsTable>,
): Promise<void> {
  if (Object.keys(change).length === 0) return;
  await trx.updateTable('broadcasts').set(change).where('team_id', '=', teamId).where('id', '=', id).execute();
}

export async function deleteBroadcast(trx: Transaction<SenderDb>, teamId: string, id: string): Promise<void> {
  await trx.deleteFrom('broadcasts').where('team_id', '=', teamId).where('id', '=', id).execute();
}

/** The team's broadcast settings (the defaults when it never changed them). */
export async function findBroadcastSettings(db: Db, teamId: string): Promise<{ require_approval: boolean }> {
  const row = await db
    .selectFrom('broadcast_settings')
    .select('require_approval')
    .where('team_id', '=', teamId)
    .executeTakeFirst();
  return { require_approval: row?.require_approval ?? false };
}

export async function upsertBroadcastSettings(
  db: Db,
  teamId: string,
  settings: { require_approval: boolean },
  now: Date,
): Promise<void> {
  await db
    .insertInto('broadcast_settings')
    .values({ team_id: teamId, require_approval: settings.require_approval, updated_at: now })
    .onConflict((oc) =>
      oc.column('team_id').doUpdateSet({ require_approval: settings.require_approval, updated_at: now }),
    )
    .execute();
}
