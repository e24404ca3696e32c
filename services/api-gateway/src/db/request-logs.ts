import type { Kysely } from 'kysely';
import { paginate, type Page } from '@postline/platform';
import type { PaginationQuery } from '@postline/contracts';
import type { GatewayDb, NewRequestLog } from './schema.ts';

export async function insertRequestLogs(db: Kysely<GatewayDb>, logs: NewRequestLog[]): Promise<void> {
  if (logs.length === 0) return;
  await db.insertInto('request_logs').values(logs).execute();
}

const LIST_COLUMNS = ['id', 'created_at', 'endpoint', 'method', 'response_status', 'user_agent'] as const;

export async function listRequestLogs(db: Kysely<GatewayDb>, teamId: string, query: PaginationQuery) {
  return paginate(db.selectFrom('request_logs').select(LIST_COLUMNS).where('team_id', '=', teamId), query);
}
export type RequestLogItem = Awaited<ReturnType<typeof listRequestLogs>> extends Page<infer T> ? T : never;

export async function findRequestLog(db: Kysely<GatewayDb>, teamId: string, id: string) {
  return db
    .selectFrom('request_logs')
    .select([...LIST_COLUMNS, 'request_body', 'response_body'])
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
}
