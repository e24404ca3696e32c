import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import { paginate, type Page } from '@postline/platform';
import type { AttemptRow, DispatcherDb, EventRow, WebhookAttemptsTable, WebhookEventsTable } from './schema.ts';

type Db = Kysely<DispatcherDb> | Transaction<DispatcherDb>;

/** Inserts the records that do not exist yet (one per endpoint and source event); returns the ids of the new ones. */
export async function insertEvents(trx: Transaction<DispatcherDb>, rows: Insertable<WebhookEventsTable>[]): Promise<string[]> {
  const created: string[] = [];
  // At most 1,000 rows (9 parameters each) per statement, well under Postgres's 65,535 parameters.
  for (let i = 0; i < rows.length; i += 1_000) {
    const chunk = await trx
      .insertInto('webhook_events')
      .values(rows.slice(i, i + 1_000))
      .onConflict((oc) => oc.columns(['endpoint_id', 'source_event_id']).doNothing())
      .returning('id')
      .execute();
    for (const row of chunk) created.push(row.id);
  }
  return created;
}

export async function findEvent(db: Db, endpointId: string, id: string): Promise<EventRow | undefined> {
  return db.selectFrom('webhook_events').selectAll().where('endpoint_id', '=', endpointId).where('id', '=', id).executeTakeFirst();
}

export async function lockEvent(trx: Transaction<DispatcherDb>, id: string): Promise<EventRow | undefined> {
  return trx.selectFrom('webhook_events').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function listEvents(db: Db, endpointId: string, query: { limit?: number; after?: string }): Promise<Page<EventRow>> {
  return paginate(db.selectFrom('webhook_events').selectAll().where('endpoint_id', '=', endpointId), query);
}

export async function updateEvent(db: Db, id: string, patch: Updateable<WebhookEventsTable>): Promise<EventRow> {
  return db
    .updateTable('webhook_events')
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertAttempt(db: Db, row: Insertable<WebhookAttemptsTable>): Promise<void> {
  await db.insertInto('webhook_attempts').values(row).execute();
}

export async function insertAttempts(db: Db, rows: Insertable<WebhookAttemptsTable>[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('webhook_attempts').values(rows).execute();
}

export async function listAttempts(db: Db, eventId: string, query: { limit?: number; after?: string }): Promise<Page<AttemptRow>> {
  return paginate(db.selectFrom('webhook_attempts').selectAll().where('event_id', '=', eventId), query);
}
