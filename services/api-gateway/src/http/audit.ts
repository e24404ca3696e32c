import type { Request, RequestHandler, Response } from 'express';
import type { Kysely } from 'kysely';
import { newId, type Logger } from '@postline/platform';
import { insertAuditEntry } from '../db/audit.ts';
import type { GatewayDb, NewAuditEntry } from '../db/schema.ts';
import { auditActionOf } from '../domain/audit.ts';
import { loggedResponseBody, maybeAuthOf } from './context.ts';

/** How long an answer waits for its audit entry's insert before it leaves anyway. */
const AUDIT_WAIT_MS = 5_000;

/**
 * Records every successful change to a team made through the gateway (domain/audit.ts says which): who (the
 * signed-in user, else the API key), what, when and from where. The entry is written before the answer
 * leaves (the answer's end waits on it, 5 s at most), so a client that reads the log after its answer finds
 * the entry; a write that fails or takes longer is logged, never turned into the request's failure, since the
 * change itself stands.
 */
export function auditLog(deps: { db: Kysely<GatewayDb>; logger: Logger }): RequestHandler {
  return (req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    let ending = false;
    res.end = ((...args: unknown[]) => {
      // The answer is already on its way out once its entry is written: a second end is a handler's bug.
      if (ending) return res;
      const entry = entryOf(req, res);
      if (!entry) return end(...args);
      ending = true;
      const status = res.statusCode;
      const written = insertAuditEntry(deps.db, entry).catch((err: unknown) =>
        req.log.error({ err, action: entry.action }, 'audit log entry not written'),
      );
      // A database that does not answer (a lock on the table, a full pool) delays the answer, never holds it.
      const patience = new Promise<void>((resolve) => setTimeout(resolve, AUDIT_WAIT_MS).unref());
      void Promise.race([written, patience]).then(() => {
        try {
          res.statusCode = status;
          end(...args);
        } catch (err) {
          req.log.error({ err }, 'answer not sent after its audit entry');
        }
      });
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
