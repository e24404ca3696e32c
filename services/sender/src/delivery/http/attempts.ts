import { Router } from 'express';
import type { Kysely } from 'kysely';
import { formatTimestamp, route, teamOf } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { attemptsOf } from '../use-cases/read-attempts.ts';

/** `/emails/{id}/attempts` (a Postline extension): what each MX address tried for the email said. */
export function deliveryRoutes(deps: { db: Kysely<SenderDb> }): Router {
  const router = Router();
  route(router, '/emails/:id/attempts', {
    get: async (req, res) => {
      const { attempts, hasMore } = await attemptsOf(deps.db, teamOf(res), req.params.id);
      res.json({
        object: 'list',
        has_more: hasMore,
        data: attempts.map((row) => ({
          attempt: row.attempt,
          recipients: row.recipients,
          mx: row.mx,
          ip: row.ip,
          port: row.port,
          tls: row.tls_version && row.tls_cipher ? { version: row.tls_version, cipher: row.tls_cipher } : null,
          started_at: formatTimestamp(row.started_at),
          duration_ms: row.duration_ms,
          transcript: row.transcript,
          omitted_lines: row.omitted,
          message_headers: row.message_headers,
        })),
      });
    },
  });
  return router;
}
