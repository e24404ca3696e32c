import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { ApiError, Counter, createHttpApp, pingDb, SEND_EMAIL_BODY, TEAM_HEADER, type HttpApp, type Logger, type Metrics } from '@postline/platform';
import type { GatewayDb } from './db/schema.ts';
import { teamHasAccess } from './db/teams.ts';
import { isAutomationsRoute } from './domain/routes.ts';
import { apiKeyRoutes } from './http/api-keys.ts';
import { authenticate } from './http/auth.ts';
import type { KeyCache } from './http/key-cache.ts';
import { forwardPublic, forwardToOwners, type Owners } from './http/forward.ts';
import { idempotency, idempotencyHooks } from './http/idempotency.ts';
import { logRoutes } from './http/logs.ts';
import { createWindowCounter, rateLimit } from './http/rate-limit.ts';
import { requestLogger, type RequestLogWriter } from './http/request-log.ts';

export type GatewayDeps = {
  db: Kysely<GatewayDb>;
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
  metrics: Metrics;
  owners: Owners;
  rateLimitPerSecond: number;
  /** Requests per second one public link (share page, download) may take. */
  publicLinkPerSecond: number;
  requestLogs: RequestLogWriter;
  markKeyUsed: (keyId: string, at: Date) => void;
  keys: KeyCache;
  now: () => Date;
};

/**
 * The public API: public link routes (no key, a rate limit per link) → auth → rate limit → body → idempotency → gateway-owned
 * routes (/api-keys, /logs) → forwarding of every other resource family to its owner.
 */
export function createGatewayApp(deps: GatewayDeps): HttpApp {
  const rejected = new Counter({
    name: 'gateway_rejected_requests_total',
    help: 'Requests refused by the gateway before reaching an owner, by error name',
    labelNames: ['name'] as const,
    registers: [deps.metrics.registry],
  });
  return createHttpApp({
    logger: deps.logger,
    metrics: deps.metrics,
    largeBodies: [SEND_EMAIL_BODY],
    readiness: {
      postgres: () => pingDb(deps.db),
      redis: async () => (await deps.redis.ping()) === 'PONG',
    },
    before: (app) => {
      app.use((_req, res, next) => {
        res.on('finish', () => {
          if (res.statusCode === 401 || res.statusCode === 403 || res.statusCode === 429) {
            rejected.inc({ name: String(res.statusCode) });
          }
        });
        next();
      });
      app.use(
        forwardPublic({
          owners: deps.owners,
          countRequest: createWindowCounter(deps.redis, deps.logger),
          redisPrefix: deps.redisPrefix,
          perLinkPerSecond: deps.publicLinkPerSecond,
          teamActive: (teamId) => teamHasAccess(deps.db, teamId),
        }),
      );
      app.use(requestLogger(deps.requestLogs));
      app.use(authenticate({ findKey: deps.keys.find, markUsed: deps.markKeyUsed, now: deps.now }));
      app.use(
        rateLimit({ redis: deps.redis, prefix: deps.redisPrefix, defaultPerSecond: deps.rateLimitPerSecond, logger: deps.logger }),
      );
      app.use((req, _res, next) => {
        if (isAutomationsRoute(req.path)) {
          throw new ApiError(404, 'not_found', 'Automations are not available yet. This feature is coming soon.');
        }
        // Only the gateway may set the trusted team header on the way to an owner.
        delete req.headers[TEAM_HEADER];
        next();
      });
    },
    routes: (app) => {
      app.use(idempotency({ db: deps.db }));
      app.use(apiKeyRoutes({ db: deps.db, domainExists: domainExists(deps.owners), onKeysChanged: deps.keys.invalidate }));
      app.use(logRoutes({ db: deps.db }));
      app.use(forwardToOwners({ owners: deps.owners, logger: deps.logger, hooks: idempotencyHooks({ db: deps.db, logger: deps.logger }) }));
    },
  });
}

function domainExists(owners: Owners) {
  return async (teamId: string, domainId: string): Promise<boolean> => {
    let r: Response;
    try {
      r = await fetch(new URL(`/domains/${domainId}`, owners['domain-verifier']), {
        headers: { [TEAM_HEADER]: teamId, accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      throw new ApiError(503, 'service_unavailable', 'Domains cannot be checked right now. Please try again later.');
    }
    await r.body?.cancel();
    if (r.status === 200) return true;
    if (r.status === 404) return false;
    throw new ApiError(503, 'service_unavailable', 'Domains cannot be checked right now. Please try again later.');
  };
}
