import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { paginate, PREPARED, type Page } from '@postline/platform';
import type { DispatcherDb, EndpointRow, WebhookEndpointsTable } from './schema.ts';

type Db = Kysely<DispatcherDb> | Transaction<DispatcherDb>;

export async function insertEndpoint(db: Db, row: Insertable<WebhookEndpointsTable>): Promise<EndpointRow> {
  return db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findEndpoint(db: Db, teamId: string, id: string): Promise<EndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Locked until the transaction ends: attempts and edits of one endpoint's state apply one at a time. FOR NO
 * KEY UPDATE, not FOR UPDATE: inserting an event takes FOR KEY SHARE on its endpoint (the foreign key), and
 * two fan-out batches that each inserted events of an endpoint and then track its failures would otherwise
 * deadlock on each other's key-share lock.
 */
export async function lockEndpoint(trx: Transaction<DispatcherDb>, id: string): Promise<EndpointRow | undefined> {
  return trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
}

export async function listEndpoints(db: Db, teamId: string, query: PaginationQuery): Promise<Page<EndpointRow>> {
  return paginate(db.selectFrom('webhook_endpoints').selectAll().where('team_id', '=', teamId), query);
}

/**
 * The endpoints of these teams that get events (the caller picks those subscribed to each event's type): the
 * enabled ones, and those disabled by their failures, whose events are recorded as failed to replay later.
 */
export async function fannedOutEndpoints(db: Db, teamIds: readonly string[]): Promise<EndpointRow[]> {
  if (teamIds.length === 0) return [];
  const { rows } = await sql<EndpointRow>`select ${PREPARED} * from webhook_endpoints
    where team_id = any(${teamIds}::uuid[]) and (status = 'enabled' or disabled_by = 'failures')`.execute(db);
  return rows;
}

export async function updateEndpoint(
  db: Db,
  id: string,
  patch: Updateable<WebhookEndpointsTable>,
): Promise<EndpointRow> {
  return db
    .updateTable('webhook_endpoints')
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteEndpoint(db: Db, teamId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}
