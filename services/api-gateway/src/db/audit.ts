import type { Kysely } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { paginate } from '@postline/platform';
import type { GatewayDb, NewAuditEntry } from './schema.ts';

export async function insertAuditEntry(db: Kysely<GatewayDb>, entry: NewAuditEntry): Promise<void> {
  await db.insertInto('audit_log').values(entry).execute();
}

export type AuditFilter = { action?: string; actor_id?: string; target_id?: string };

/** A team's audit log, newest first, with the acting user's email or the acting key's name. */
export async function listAuditLog(db: Kysely<GatewayDb>, teamId: string, filter: AuditFilter, query: PaginationQuery) {
  let q = db
    .selectFrom('audit_log')
    .leftJoin('users', (j) => j.onRef('users.id', '=', 'audit_log.actor_id').on('audit_log.actor_type', '=', 'user'))
    .leftJoin('api_keys', (j) =>
      j.onRef('api_keys.id', '=', 'audit_log.actor_id').on('audit_log.actor_type', '=', 'api_key'),
    )
    .selectAll('audit_log')
    .select(['users.email as user_email', 'api_keys.name as key_name'])
    .where('audit_log.team_id', '=', teamId);
  // An action filter is either a whole action (`api-keys.created`) or a family (`api-keys`).
  if (filter.action) {
    const action = filter.action;
    q = q.where((eb) => eb.or([eb('audit_log.action', '=', action), eb('audit_log.target_type', '=', action)]));
  }
  if (filter.actor_id) q = q.where('audit_log.actor_id', '=', filter.actor_id);
  if (filter.target_id) q = q.where('audit_log.target_id', '=', filter.target_id);
  return paginate(q, query, { idColumn: 'audit_log.id' });
}
