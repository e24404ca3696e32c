import { Router } from 'express';
import { requireTeam } from '@postline/platform';
import type { EmailLinkDeps } from '../emails/use-cases/email-links.ts';
import { emailLinkRoutes, publicLinkRoutes } from '../emails/http/email-links.ts';
import { broadcastRoutes } from '../broadcasts/http/broadcasts.ts';
import { contactImportRoutes } from '../audience/http/contact-imports.ts';
import { contactPropertyRoutes } from '../audience/http/contact-properties.ts';
import { contactRoutes } from '../audience/http/contacts.ts';
import { emailRoutes, type EmailRouteDeps } from '../emails/http/emails.ts';
import { segmentRoutes } from '../audience/http/segments.ts';
import { suppressionRoutes } from '../suppressions/http/suppressions.ts';
import { templateRoutes } from '../templates/http/templates.ts';
import { topicRoutes } from '../audience/http/topics.ts';
import { trackingRoutes } from '../engagement/http/tracking.ts';
import { unsubscribeRoutes } from '../engagement/http/unsubscribe.ts';
import type { TrackingDeps } from '../engagement/use-cases/record-engagement.ts';
import type { UnsubscribeDeps } from '../engagement/use-cases/unsubscribe.ts';

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
