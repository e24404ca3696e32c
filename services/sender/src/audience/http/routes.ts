import { Router } from 'express';
import { contactImportRoutes, type ContactImportRouteDeps } from './contact-imports.ts';
import { contactPropertyRoutes } from './contact-properties.ts';
import { contactRoutes } from './contacts.ts';
import { segmentRoutes } from './segments.ts';
import { topicRoutes } from './topics.ts';

/** The audience's routes: contacts, their properties, segments, topics and CSV imports. */
export function audienceRoutes(deps: ContactImportRouteDeps): Router {
  const router = Router();
  // Contact imports go first: `/contacts/imports` is not a contact named `imports`.
  router.use(contactImportRoutes(deps));
  router.use(contactPropertyRoutes(deps));
  router.use(segmentRoutes(deps));
  router.use(topicRoutes(deps));
  router.use(contactRoutes(deps));
  return router;
}
