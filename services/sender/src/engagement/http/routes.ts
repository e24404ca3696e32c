import { Router } from 'express';
import type { TrackingDeps } from '../use-cases/record-engagement.ts';
import type { UnsubscribeDeps } from '../use-cases/unsubscribe.ts';
import { trackingRoutes } from './tracking.ts';
import { unsubscribeRoutes } from './unsubscribe.ts';

/**
 * The public routes of engagement, reached through the gateway without a team: the open pixel and click
 * redirect, and the unsubscribe link and preference page. A signed or sealed token names what they serve.
 */
export function engagementRoutes(deps: TrackingDeps & UnsubscribeDeps): Router {
  const router = Router();
  router.use(trackingRoutes(deps));
  router.use(unsubscribeRoutes(deps));
  return router;
}
