import { Router } from 'express';
import { route } from '@postline/platform';
import { RELAY_CREDENTIALS_PATH } from '../domain/routes.ts';
import { authOf } from './context.ts';

/**
 * GET /relay/credentials: the SMTP relay's check of the API key a client gave at AUTH. Reaching this
 * handler means the key is valid and its team has access (the auth middleware answered 401/403
 * otherwise); the answer names the key's permission (both may submit through the relay).
 */
export function relayRoutes(): Router {
  const router = Router();
  route(router, RELAY_CREDENTIALS_PATH, {
    get: (_req, res) => {
      const { permission } = authOf(res);
      res.json({ object: 'relay_credentials', permission });
    },
  });
  return router;
}
