import type { Kysely } from 'kysely';
import { escapeLike, firstIdAt, paginate, type Page } from '@postline/platform';
import type { ApiRequests, PaginationQuery } from '@postline/contracts';
import type { GatewayDb, NewRequestLog } from './schema.ts';

export async function insertRequestLogs(db: Kysely<GatewayDb>, logs: NewRequestLog[]): Promise<void> {
  if (logs.length === 0) return;
  await db.insertInto('request_logs').values(logs).execute();
}

const LIST_COLUMNS = [
  'request_logs.id',
  'request_logs.created_at',
  'request_logs.endpoint',
  'request_logs.method',
  'request_logs.response_status',
  'request_logs.user_agent',
  'request_logs.api_key_id',
  'request_logs.user_id',
  'api_keys.name as api_key_name',
  'users.email as user_email',
] as const;

/**
 * A log's id is made when the answer is sent and its created_at when the row is written, up to a few seconds
 * later (the writer batches every 200 ms, and retries while the database is away). A time filter also bounds the
 * id with this much slack, so that it reads a range of the team's (team_id, id) index instead of every older log.
 */
const ID_TIME_SLACK_MS = 10 * 60_000;

/** A team's request logs, newest first, narrowed by GET /logs's filters, with the key's name or the user's email. */
export async function listRequestLogs(
  db: Kysely<GatewayDb>,
  teamId: string,
  filter: ApiRequests.LogFilterQuery,
  query: PaginationQuery,
) {
  let q = db
    .selectFrom('request_logs')
    .leftJoin('api_keys', 'api_keys.id', 'request_logs.api_key_id')
    .leftJoin('users', 'users.id', 'request_logs.user_id')
    .select(LIST_COLUMNS)
    .where('request_logs.team_id', '=', teamId);
  if (filter.status) {
    const status = filter.status;
    if (status.endsWith('xx')) {
      const low = Number(status[0]) * 100;
      q = q.where('request_logs.response_status', '>=', low).where('request_logs.response_status', '<', low + 100);
    } else q = q.where('request_logs.response_status', '=', Number(status));
  }
  if (filter.method) q = q.where('request_logs.method', '=', filter.method);
  if (filter.endpoint) q = q.where('request_logs.endpoint', 'like', `${escapeLike(filter.endpoint)}%`);
  if (filter.api_key_id) q = q.where('request_logs.api_key_id', '=', filter.api_key_id);
  if (filter.user_agent) q = q.where('request_logs.user_agent', 'ilike', `%${escapeLike(filter.user_agent)}%`);
  if (filter.created_after) {
    const at = new Date(filter.created_after);
    q = q
      .where('request_logs.created_at', '>=', at)
      .where('request_logs.id', '>=', firstIdAt(at.getTime() - ID_TIME_SLACK_MS));
  }
  if (filter.created_before) {
    const at = new Date(filter.created_before);
    q = q
      .where('request_logs.created_at', '<', at)
      .where('request_logs.id', '<', firstIdAt(at.getTime() + ID_TIME_SLACK_MS));
  }
  return paginate(q, query, { idColumn: 'request_logs.id' });
}
export type RequestLogItem = Awaited<ReturnType<typeof listRequestLogs>> extends Page<infer T> ? T : never;

export async function findRequestLog(db: Kysely<GatewayDb>, teamId: string, id: string) {
  return db
    .selectFrom('request_logs')
    .leftJoin('api_keys', 'api_keys.id', 'request_logs.api_key_id')
    .leftJoin('users', 'users.id', 'request_logs.user_id')
    .select([...LIST_COLUMNS, 'request_logs.request_body', 'request_logs.response_body'])
    .where('request_logs.team_id', '=', teamId)
    .where('request_logs.id', '=', id)
    .executeTakeFirst();
}
