import { Router } from 'express';
import { requireTeam } from '@postline/platform';
import type { ReceivedEmailDeps } from '../use-cases/received-emails.ts';
import { inboundLinkRoutes } from './inbound-links.ts';
import { receivedEmailRoutes } from './received-emails.ts';

/** The inbound-smtp's internal HTTP API: the received emails, and the public side of their download links. */
export function internalRoutes(deps: ReceivedEmailDeps): Router {
  const router = Router();
  // Reached by the gateway without a key: the signed token alone names what may be read.
  router.use(inboundLinkRoutes(deps));
  // Every family this service owns is reachable only through the gateway, which sets the team header.
  router.use(['/emails/receiving'], requireTeam());
  router.use(receivedEmailRoutes(deps));
  return router;
}
