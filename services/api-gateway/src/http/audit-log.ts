import { Router } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, isUuid, parseInput, route } from '@postline/platform';
import { listAuditLog } from '../db/audit.ts';
import type { GatewayDb } from '../db/schema.ts';
import { authOf } from './context.ts';

/**
 * A page of a team's audit log from a request's query (`limit`, `after`, `before`, `action`, `actor_id`,
 * `target_id`), as both GET /audit-log and GET /dashboard-api/audit-log answer it.
 */
export async function auditLogPage(db: Kysely<GatewayDb>, teamId: string, query: Record<string, unknown>) {
  const { limit, after, before, ...rest } = query;
  const filter = parseInput(ApiRequests.AuditLogQuery, rest);
  const page = parseInput(PaginationQuery, { limit, after, before });
  // An id that is not a uuid matches no actor.
  if (filter.actor_id !== undefined && !isUuid(filter.actor_id)) return { object: 'list', has_more: false, data: [] };
  const entries = await listAuditLog(db, teamId, filter, page);
  return {
    ...entries,
    data: entries.data.map((e) => ({
      object: 'audit_log_entry',
      id: e.id,
      action: e.action,
      actor:
        e.actor_type === 'user'
          ? { type: 'user', id: e.actor_id, email: e.user_email }
          : { type: 'api_key', id: e.actor_id, name: e.key_name },
      target: { type: e.target_type, id: e.target_id },
      method: e.method,
      endpoint: e.endpoint,
      ip: e.ip,
      user_agent: e.user_agent,
      created_at: formatTimestamp(e.created_at),
    })),
  };
}

/** GET /audit-log: the team's audit log for a full-access key (or a session), as the dashboard lists it. */
export function auditLogRoutes(deps: { db: Kysely<GatewayDb> }): Router {
  const router = Router();
  route(router, '/audit-log', {
    get: async (req, res) => {
      res.json(await auditLogPage(deps.db, authOf(res).teamId, req.query));
    },
  });
  return router;
}
