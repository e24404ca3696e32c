import { Router } from 'express';
import { requireTeam } from '@postline/platform';
import { domainRoutes, type DomainRouteDeps } from './domains.ts';

/** The domain-verifier's internal HTTP API, reached only through the gateway. */
export function internalRoutes(deps: DomainRouteDeps): Router {
  const router = Router();
  // Every family this service owns is reachable only through the gateway, which sets the team header.
  router.use(['/domains'], requireTeam());
  router.use(domainRoutes(deps));
  return router;
}
