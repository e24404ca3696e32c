import { Router } from 'express';
import { requireTeam } from '@postline/platform';
import { webhookRoutes, type WebhookRouteDeps } from './webhooks.ts';

/** The webhook-dispatcher's internal HTTP API, reached only through the gateway. */
export function internalRoutes(deps: WebhookRouteDeps): Router {
  const router = Router();
  // Every family this service owns is reachable only through the gateway, which sets the team header.
  router.use(['/webhooks'], requireTeam());
  router.use(webhookRoutes(deps));
  return router;
}
