import { Router } from 'express';
import type { Kysely } from 'kysely';
import { normalizeHostName, TRACKING_HOSTS_PATH } from '@postline/contracts';
import { notFound, route } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { isVerifiedTrackingHost } from '../db/sending-domains.ts';

/**
 * Whether a host is a verified tracking host (200 with the host), else 404: what the TLS proxy's on-demand
 * certificates are allowed for. Asked through the gateway's key-less, rate-limited `/internal/tls-ask`; a
 * host is answered by the sender's read model of sending domains, which decides where tracked links point.
 */
export function trackingHostRoutes(deps: { db: Kysely<SenderDb> }): Router {
  const router = Router();
  route(router, `${TRACKING_HOSTS_PATH}/:host`, {
    get: async (req, res) => {
      const host = normalizeHostName(req.params.host ?? '');
      if (host === undefined || !(await isVerifiedTrackingHost(deps.db, host))) {
        throw notFound('No verified tracking host has this name.');
      }
      res.status(200).json({ host });
    },
  });
  return router;
}
