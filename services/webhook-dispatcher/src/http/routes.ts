import { Router } from 'express';
import { requireTeam, teamRetentionRoutes } from '@postline/platform';
import { webhookRoutes, type WebhookRouteDeps } from './webhooks.ts';

/** The webhook-dispatcher's internal HTTP API, reached only through the gateway. */
export function internalRoutes(deps: WebhookRouteDeps): Router {
  const router = Router();
  // Every family this service owns is reachable only through the gateway, which sets the team header.
  router.use(['/webhooks'], requireTeam());
  // The gateway's push of the team's retention (the retention job's read model).
  router.use(teamRetentionRoutes(deps.db));
  router.use(webhookRoutes(deps));
  return router;
}
