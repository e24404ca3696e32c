import { Router } from 'express';
import { requireTeam } from '@postline/platform';
import type { EmailLinkDeps } from '../use-cases/email-links.ts';
import { emailLinkRoutes, publicLinkRoutes } from './email-links.ts';
import { broadcastRoutes } from './broadcasts.ts';
import { contactImportRoutes } from './contact-imports.ts';
import { contactPropertyRoutes } from './contact-properties.ts';
import { contactRoutes } from './contacts.ts';
import { emailRoutes, type EmailRouteDeps } from './emails.ts';
import { segmentRoutes } from './segments.ts';
import { suppressionRoutes } from './suppressions.ts';
import { templateRoutes } from './templates.ts';
import { topicRoutes } from './topics.ts';
import { trackingRoutes } from './tracking.ts';
import { unsubscribeRoutes } from './unsubscribe.ts';
import type { TrackingDeps } from '../use-cases/record-engagement.ts';
import type { UnsubscribeDeps } from '../use-cases/unsubscribe.ts';

/** The sender's internal HTTP API: resource routes reached through the gateway. */
export function internalRoutes(deps: EmailRouteDeps & EmailLinkDeps & UnsubscribeDeps & TrackingDeps): Router {
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
      '/contact-properties',
    ],
    requireTeam(),
  );
  router.use(emailLinkRoutes(deps));
  router.use(emailRoutes(deps));
  router.use(suppressionRoutes(deps));
  // Contact imports go here, before the contacts: `/contacts/imports` is not a contact named `imports`.
  router.use(contactImportRoutes(deps));
  router.use(contactPropertyRoutes(deps));
  router.use(segmentRoutes(deps));
  router.use(templateRoutes(deps));
  router.use(topicRoutes(deps));
  router.use(broadcastRoutes(deps));
  router.use(contactRoutes(deps));
  // Reached through the gateway's public routes, without a team: a signed token names what they serve.
  router.use(publicLinkRoutes(deps));
  router.use(trackingRoutes(deps));
  router.use(unsubscribeRoutes(deps));
  return router;
}
