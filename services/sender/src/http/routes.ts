import { Router } from 'express';
import { requireTeam } from '@postline/platform';
import { audienceRoutes } from '../audience/index.ts';
import { broadcastRoutes } from '../broadcasts/index.ts';
import { deliverabilityRoutes } from '../deliverability/index.ts';
import { deliveryRoutes } from '../delivery/index.ts';
import { devInboxRoutes } from '../dev-inbox/index.ts';
import { emailsRoutes, publicLinkRoutes, type EmailLinkDeps, type EmailRouteDeps } from '../emails/index.ts';
import { engagementRoutes, type TrackingDeps, type UnsubscribeDeps } from '../engagement/index.ts';
import { formRoutes, hostedFormRoutes, type FormRouteDeps, type SignupDeps } from '../forms/index.ts';
import { trackingHostRoutes } from '../sending-domains/index.ts';
import { reputationRoutes, type ReputationDeps } from '../reputation/index.ts';
import { suppressionRoutes } from '../suppressions/index.ts';
import { templateRoutes } from '../templates/index.ts';

/** The sender's internal HTTP API: each module's routes, reached through the gateway. */
export function internalRoutes(
  deps: EmailRouteDeps & EmailLinkDeps & UnsubscribeDeps & TrackingDeps & FormRouteDeps & SignupDeps & ReputationDeps,
): Router {
  const router = Router();
  // Every family this service owns is reachable only through the gateway, which sets the team header.
  router.use(
    [
      '/emails',
      '/templates',
      '/contacts',
      '/segments',
      '/audiences',
      '/topics',
      '/broadcasts',
      '/suppressions',
      '/reputation',
      '/deliverability',
      '/contact-properties',
      '/dev-inbox',
      '/forms',
    ],
    requireTeam(),
  );
  router.use(emailsRoutes(deps));
  router.use(deliveryRoutes(deps));
  router.use(devInboxRoutes(deps));
  router.use(suppressionRoutes(deps));
  router.use(reputationRoutes(deps));
  router.use(deliverabilityRoutes(deps));
  router.use(audienceRoutes(deps));
  router.use(templateRoutes(deps));
  router.use(broadcastRoutes(deps));
  router.use(formRoutes(deps));
  // Reached through the gateway's public routes, without a team: a signed token names what they serve.
  router.use(publicLinkRoutes(deps));
  router.use(engagementRoutes(deps));
  router.use(hostedFormRoutes(deps));
  // Asked by the gateway alone, for the TLS proxy in front: which hosts may get a certificate.
  router.use(trackingHostRoutes(deps));
  return router;
}
