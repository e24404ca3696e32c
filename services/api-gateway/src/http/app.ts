import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { SEND_EMAIL_BODY } from '@postline/contracts';
import type { Express } from 'express';
import { ApiError, TEAM_HEADER, type LargeBody, type Logger, type ReadinessCheck } from '@postline/platform';
import type { KeyCache } from '../db/key-cache.ts';
import type { GatewayDb } from '../db/schema.ts';
import { isAutomationsRoute, type Owners } from '../domain/routes.ts';
import type { RequestLogWriter } from '../jobs/request-log-writer.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { DASHBOARD_PREFIX } from '../domain/session.ts';
import type { DashboardMail } from '../owners/dashboard-mail.ts';
import type { SignInLimit } from '../redis/sign-in-limit.ts';
import type { FormSubmitLimit } from '../redis/form-submit-limit.ts';
import { createWindowCounter } from '../redis/window-counter.ts';
import { auditLog } from './audit.ts';
import { authenticate } from './auth.ts';
import { dashboardRoutes } from './dashboard.ts';
import { dashboardAppRoutes } from './dashboard-app.ts';
import { forwardPublic } from './forward.ts';
import { defaultRateLimitHeaders, rateLimit } from './rate-limit.ts';
import { referenceRoutes } from './reference.ts';
import { tlsAskRoutes } from './tls-ask.ts';
import { requestLogger } from './request-log.ts';
import type { IdempotencyLeases } from '../jobs/idempotency-leases.ts';
import { mountRoutes } from './routes.ts';
import { authenticateSession, type SessionDeps } from './session-auth.ts';

export type GatewayDeps = {
  db: Kysely<GatewayDb>;
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
  gatewayMetrics: GatewayMetrics;
  owners: Owners;
  /** Whether a team owns a domain (asked of the domain-verifier). */
  domainExists: (teamId: string, domainId: string) => Promise<boolean>;
  /** Whether a host is a verified tracking host (asked of the sender), for the TLS proxy's ask. */
  isTrackingHost: (host: string) => Promise<boolean>;
  rateLimitPerSecond: number;
  /** Requests per second one public link (share page, download) may take. */
  publicLinkPerSecond: number;
  /** Counts a hosted signup form's submits per client address and per form. */
  formSubmitLimit?: FormSubmitLimit;
  /** Proxies in front that add to X-Forwarded-For (TRUSTED_PROXY_HOPS): where `req.ip` is read from. */
  trustedProxyHops?: number;
  requestLogs: RequestLogWriter;
  markKeyUsed: (keyId: string, at: Date) => void;
  /** The leases of the idempotency keys this gateway holds in flight. */
  idempotencyLeases: IdempotencyLeases;
  keys: KeyCache;
  /** Whether a team's access is enabled, kept current by the key-change notifications. */
  teamAccess: KeyCache<boolean>;
  now: () => Date;
  /** Dashboard sessions: the site they are used from, their idle and absolute lifetimes, the sign-in limits. */
  sessions: Pick<SessionDeps, 'publicBaseUrl' | 'idleMs'> & {
    maxAgeMs: number;
    signIn: SignInLimit;
    mail: DashboardMail | undefined;
  };
};

/** What the service runtime's HTTP app takes from the gateway (createHttpApp's options of the same names). */
export type GatewayHttp = {
  before: (app: Express) => void;
  routes: (app: Express) => void;
  readiness: Record<string, ReadinessCheck>;
  largeBodies: readonly LargeBody[];
};

/**
 * The public API: the OpenAPI document, the reference page and the dashboard's pages (no key) → the TLS
 * proxy's certificate ask (no key, one rate limit) → public link routes (no key, a rate limit per link) → the dashboard's own routes (/dashboard-api) → auth (a
 * dashboard session, else a bearer key) → rate limit → body → idempotency → gateway-owned
 * routes (/api-keys, /logs) → forwarding of every other resource family to its owner. The runtime adds the
 * health routes and its readiness check of Postgres.
 */
export function gatewayHttp(deps: GatewayDeps): GatewayHttp {
  const { rejected } = deps.gatewayMetrics;
  return {
    largeBodies: [SEND_EMAIL_BODY],
    readiness: {
      redis: async () => (await deps.redis.ping()) === 'PONG',
    },
    before: (app) => {
      // express's `req.ip`: the peer, or with proxies in front the address that many hops into X-Forwarded-For.
      app.set('trust proxy', deps.trustedProxyHops ?? 0);
      app.use((_req, res, next) => {
        res.on('finish', () => {
          if (res.statusCode === 401 || res.statusCode === 403 || res.statusCode === 429) {
            rejected.inc({ name: String(res.statusCode) });
          }
        });
        next();
      });
      app.use(referenceRoutes());
      app.use(dashboardAppRoutes());
      const countRequest = createWindowCounter(deps.redis, deps.logger);
      app.use(
        tlsAskRoutes({
          isTrackingHost: deps.isTrackingHost,
          publicBaseUrl: deps.sessions.publicBaseUrl,
          countRequest,
          redisPrefix: deps.redisPrefix,
          perSecond: deps.publicLinkPerSecond,
        }),
      );
      app.use(
        forwardPublic({
          owners: deps.owners,
          countRequest,
          redisPrefix: deps.redisPrefix,
          perLinkPerSecond: deps.publicLinkPerSecond,
          teamActive: async (teamId) => (await deps.teamAccess.find(teamId)) === true,
          formSubmitLimit: deps.formSubmitLimit,
        }),
      );
      const sessionDeps = { db: deps.db, now: deps.now, ...deps.sessions };
      app.use(DASHBOARD_PREFIX, dashboardRoutes(sessionDeps));
      app.use(requestLogger(deps.requestLogs));
      app.use(defaultRateLimitHeaders(deps.rateLimitPerSecond));
      app.use(auditLog({ db: deps.db, logger: deps.logger }));
      app.use(authenticateSession(sessionDeps));
      app.use(authenticate({ findKey: deps.keys.find, markUsed: deps.markKeyUsed, now: deps.now }));
      app.use(
        rateLimit({
          redis: deps.redis,
          prefix: deps.redisPrefix,
          defaultPerSecond: deps.rateLimitPerSecond,
          logger: deps.logger,
        }),
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
    routes: (app) =>
      mountRoutes(app, {
        db: deps.db,
        logger: deps.logger,
        owners: deps.owners,
        idempotencyLeases: deps.idempotencyLeases,
        domainExists: deps.domainExists,
        onKeysChanged: deps.keys.invalidate,
        now: deps.now,
      }),
  };
}
