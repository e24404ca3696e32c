import { Router } from 'express';
import type { EmailLinkDeps } from '../use-cases/email-links.ts';
import { emailLinkRoutes } from './email-links.ts';
import { emailRoutes, type EmailRouteDeps } from './emails.ts';

/** The emails' routes behind the gateway's team header: `/emails`, their attachments and share links. */
export function emailsRoutes(deps: EmailRouteDeps & EmailLinkDeps): Router {
  const router = Router();
  // The links' routes go first: `/emails/{id}/attachments` is not answered by `/emails/{id}`.
  router.use(emailLinkRoutes(deps));
  router.use(emailRoutes(deps));
  return router;
}
