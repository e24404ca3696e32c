import { Router } from 'express';
import { requireTeam } from '@postline/platform';

/** The domain-verifier's internal HTTP API (resource routes arrive with the issue that builds them). */
export function internalRoutes(): Router {
  const router = Router();
  // Every family this service owns is reachable only through the gateway, which sets the team header.
  router.use(['/domains'], requireTeam());
  return router;
}
