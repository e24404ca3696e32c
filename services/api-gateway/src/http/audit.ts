import type { Request, RequestHandler, Response } from 'express';
import type { Kysely } from 'kysely';
import { newId, type Logger } from '@postline/platform';
import { insertAuditEntry } from '../db/audit.ts';
import type { GatewayDb, NewAuditEntry } from '../db/schema.ts';
import { auditActionOf } from '../domain/audit.ts';
import { loggedResponseBody, maybeAuthOf } from './context.ts';

/**
 * Records every successful change to a team made through the gateway (domain/audit.ts says which): who (the
 * signed-in user, else the API key), what, when and from where. The entry is written before the answer
 * leaves (the answer's end waits on it), so a change the client saw succeed has its entry; a write that
 * fails is logged, never turned into the request's failure, since the change itself stands.
 */
export function auditLog(deps: { db: Kysely<GatewayDb>; logger: Logger }): RequestHandler {
  return (req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      const entry = entryOf(req, res);
      if (!entry) return end(...args);
      insertAuditEntry(deps.db, entry)
        .catch((err: unknown) => req.log.error({ err, action: entry.action }, 'audit log entry not written'))
        .finally(() => end(...args));
      return res;
    }) as Response['end'];
    next();
  };
}

/** The entry a finished request records, or null when it changed nothing (or failed, or had no actor). */
function entryOf(req: Request, res: Response): NewAuditEntry | null {
  if (res.statusCode < 200 || res.statusCode >= 300) return null;
  const auth = maybeAuthOf(res);
  if (!auth) return null;
  const body = loggedResponseBody(res) as { id?: unknown } | undefined;
  const what = auditActionOf(req.method, req.path, body?.id);
  if (!what) return null;
  const actor = auth.user ? { type: 'user' as const, id: auth.user.id } : { type: 'api_key' as const, id: auth.keyId };
  if (!actor.id) return null;
  return {
    id: newId(),
    team_id: auth.teamId,
    actor_type: actor.type,
    actor_id: actor.id,
    ...what,
    method: req.method,
    endpoint: req.path.slice(0, 500),
    ip: req.ip ?? null,
    user_agent: req.header('user-agent')?.slice(0, 500) ?? null,
  };
}
