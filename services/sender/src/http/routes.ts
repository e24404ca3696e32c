import { Router } from 'express';
import { requireTeam } from '@postline/platform';
import type { EmailLinkDeps } from '../use-cases/email-links.ts';
import { emailLinkRoutes, publicLinkRoutes } from './email-links.ts';
import { emailRoutes, type EmailRouteDeps } from './emails.ts';
import { suppressionRoutes } from './suppressions.ts';

/** The sender's internal HTTP API: resource routes reached through the gateway. */
export function internalRoutes(deps: EmailRouteDeps & EmailLinkDeps): Router {
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
  // Reached through the gateway's public routes, without a team: a signed token names what they serve.
  router.use(publicLinkRoutes(deps));
  return router;
}
