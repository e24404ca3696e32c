import type { RequestHandler } from 'express';
import type { Kysely } from 'kysely';
import { newId, type Logger } from '@postline/platform';
import { insertAuditEntry } from '../db/audit.ts';
import type { GatewayDb } from '../db/schema.ts';
import { auditActionOf } from '../domain/audit.ts';
import { loggedResponseBody, maybeAuthOf } from './context.ts';

/**
 * Records every successful change to a team made through the gateway (domain/audit.ts says which): who (the
 * signed-in user, else the API key), what, when and from where. Written once the answer is sent; a write that
 * fails is logged, never turned into the request's failure.
 */
export function auditLog(deps: { db: Kysely<GatewayDb>; logger: Logger }): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => {
      if (res.statusCode < 200 || res.statusCode >= 300) return;
      const auth = maybeAuthOf(res);
      if (!auth) return;
      const body = loggedResponseBody(res) as { id?: unknown } | undefined;
      const what = auditActionOf(req.method, req.path, body?.id);
      if (!what) return;
      const actor = auth.user
        ? { type: 'user' as const, id: auth.user.id }
        : { type: 'api_key' as const, id: auth.keyId };
      if (!actor.id) return;
      insertAuditEntry(deps.db, {
        id: newId(),
        team_id: auth.teamId,
        actor_type: actor.type,
        actor_id: actor.id,
        ...what,
        method: req.method,
        endpoint: req.path.slice(0, 500),
        ip: req.ip ?? null,
        user_agent: req.header('user-agent')?.slice(0, 500) ?? null,
      }).catch((err: unknown) => req.log.error({ err, action: what.action }, 'audit log entry not written'));
    });
    next();
  };
}
