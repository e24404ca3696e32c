import type { Express } from 'express';
import type { Kysely } from 'kysely';
import type { Logger } from '@postline/platform';
import { createMemberAddresses } from '../db/members.ts';
import type { GatewayDb } from '../db/schema.ts';
import type { Owners } from '../domain/routes.ts';
import type { IdempotencyLeases } from '../jobs/idempotency-leases.ts';
import { apiKeyRoutes, type ApiKeyDeps } from './api-keys.ts';
import { auditLogRoutes } from './audit-log.ts';
import { forwardToOwners } from './forward.ts';
import { idempotency, idempotencyHooks } from './idempotency.ts';
import { logRoutes } from './logs.ts';
import { rawEmailBody } from './raw-email.ts';
import { relayRoutes } from './relay.ts';

export type RouteDeps = Pick<ApiKeyDeps, 'domainExists' | 'onKeysChanged' | 'now'> & {
  db: Kysely<GatewayDb>;
  logger: Logger;
  owners: Owners;
  idempotencyLeases: IdempotencyLeases;
};

/**
 * The routes behind authentication: a raw email's body read, idempotency keys held for POST /emails, the gateway's own families
 * (/api-keys, /logs, the relay's key check), then every other family forwarded to its owner.
 */
export function mountRoutes(app: Express, deps: RouteDeps): void {
  app.use(rawEmailBody());
  app.use(idempotency({ db: deps.db, leases: deps.idempotencyLeases }));
  app.use(
    apiKeyRoutes({ db: deps.db, domainExists: deps.domainExists, onKeysChanged: deps.onKeysChanged, now: deps.now }),
  );
  app.use(logRoutes({ db: deps.db }));
  app.use(auditLogRoutes({ db: deps.db }));
  app.use(relayRoutes());
  app.use(
    forwardToOwners({
      owners: deps.owners,
      logger: deps.logger,
      hooks: idempotencyHooks({ db: deps.db, logger: deps.logger, leases: deps.idempotencyLeases }),
      memberAddresses: createMemberAddresses(deps.db),
    }),
  );
}
