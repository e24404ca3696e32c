import type { ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { consumerQueueNames, createDb, DEFAULT_RETRY_POLICY, newId } from '@postline/platform';
import {
  createTestDatabase,
  deleteBrokerPrefix,
  freePort,
  infraFromEnv,
  uniqueName,
  validateApiResponses,
  waitFor,
  type TestDatabase,
} from '@postline/testing';
import { loadConfig, SCHEMA } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import type { GatewayDb } from '../src/db/schema.ts';
import { insertTeam } from '../src/db/teams.ts';
import { ownerOf, publicOwnerOf } from '../src/domain/routes.ts';
import { createGateway } from '../src/gateway.ts';
import { issueApiKey } from '../src/use-cases/api-keys.ts';

export type Gateway = {
  url: string;
  /** The gateway's Redis connection and its key prefix (REDIS_PREFIX), to read what its limiters counted. */
  redis: Redis;
  redisPrefix: string;
  /** The dashboard's origin (PUBLIC_BASE_URL's), which a session's changes must come from. */
  origin: string;
  db: Kysely<GatewayDb>;
  /** The gateway's database, for a command run beside it (the admin CLI). */
  databaseUrl: string;
  createTeam: (opts?: { rateLimit?: number }) => Promise<{ teamId: string; apiKey: string; keyId: string }>;
  createKey: (
    teamId: string,
    permission: 'full_access' | 'sending_access',
  ) => Promise<{ apiKey: string; keyId: string }>;
  flush: () => Promise<void>;
  /** Requests whose client went away before the answer was sent, as the gateway's server saw them. */
  abandonedRequests: () => number;
  /** The one-time setup link the gateway logged at start (a fresh database has no user). */
  setupLink: () => string | undefined;
  stop: () => Promise<void>;
};

/** The site PUBLIC_BASE_URL names by default: what a browser on the dashboard sends as Origin. */
export const DEFAULT_ORIGIN = 'http://localhost:3000';

/** The gateway main.ts starts (createGateway) on a random port, over its own fresh database and Redis prefix. */
export async function startGateway(
  opts: {
    rateLimitPerSecond?: number;
    publicLinkPerSecond?: number;
    owners?: Partial<Record<string, string>>;
    redisUrl?: string;
    /** More of the gateway's environment. */
    env?: Record<string, string>;
    /** How long an idempotency key in flight holds unrenewed (the gateway's own lease unless shortened). */
    idempotencyLeaseMs?: number;
  } = {},
): Promise<Gateway> {
  const database: TestDatabase = await createTestDatabase('gw');
  // Nothing listens here: owners are unreachable (connection refused) unless a test gives real ones.
  const NOWHERE = `http://127.0.0.1:${await freePort()}`;
  const migrating = createDb<GatewayDb>({ url: database.url, schema: SCHEMA, max: 1 });
  await migrate(migrating.db);
  await migrating.db.destroy();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    SHUTDOWN_TIMEOUT_MS: '2000',
    API_PORT: '0',
    REDIS_URL: opts.redisUrl ?? infraFromEnv().redisUrl,
    REDIS_PREFIX: uniqueName('gw'),
    RATE_LIMIT_PER_SECOND: String(opts.rateLimitPerSecond ?? 1000),
    PUBLIC_LINK_RATE_LIMIT_PER_SECOND: String(opts.publicLinkPerSecond ?? 1000),
    SENDER_URL: opts.owners?.sender ?? NOWHERE,
    INBOUND_SMTP_URL: opts.owners?.['inbound-smtp'] ?? NOWHERE,
    WEBHOOK_DISPATCHER_URL: opts.owners?.['webhook-dispatcher'] ?? NOWHERE,
    DOMAIN_VERIFIER_URL: opts.owners?.['domain-verifier'] ?? NOWHERE,
    // Used only with the dashboard's emails configured (the notices' consumer): a prefix of its own.
    AMQP_URL: infraFromEnv().amqpUrl,
    BROKER_PREFIX: uniqueName('gw'),
    ...opts.env,
  });
  const redis = new Redis(config.REDIS_URL, {
    commandTimeout: 250,
    maxRetriesPerRequest: 1,
    enableAutoPipelining: true,
  });
  const gateway = createGateway(
    config,
    { redis },
    { handleSignals: false, idempotencyLeaseMs: opts.idempotencyLeaseMs },
  );
  const { db } = gateway;
  const server = await gateway.start();
  // A response's close listeners run in one emit: once a test sees this count move, the app's own close
  // handlers for that request (the idempotency middleware's) have run too.
  let abandoned = 0;
  server.server.on('request', (_req, res: ServerResponse) => {
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
    });
  });
  await waitFor('the key-change listener', () => gateway.keyChangesListening());

  const createKey = async (teamId: string, permission: 'full_access' | 'sending_access') => {
    const { key, token } = await issueApiKey(db, { teamId, name: 'test', permission, domainId: null });
    return { apiKey: token, keyId: key.id };
  };
  const url = `http://127.0.0.1:${server.port}`;
  // Every answer the gateway gives is checked against the OpenAPI document, as every system's API answers
  // are; not those it forwards from a test's stand-in owner, whose bodies are the test's own.
  const standIns = new Set(Object.keys(opts.owners ?? {}));
  validateApiResponses(url, {
    skip: (_method, path) => {
      const owner = ownerOf(path) ?? publicOwnerOf(path);
      return owner !== undefined && standIns.has(owner);
    },
  });
  return {
    url,
    redis,
    redisPrefix: config.REDIS_PREFIX,
    origin: new URL(opts.env?.PUBLIC_BASE_URL ?? DEFAULT_ORIGIN).origin,
    db,
    databaseUrl: database.url,
    createKey,
    async createTeam(o = {}) {
      const team = await insertTeam(db, { id: newId(), name: 'team' });
      if (o.rateLimit !== undefined)
        await db.updateTable('teams').set({ rate_limit_per_second: o.rateLimit }).where('id', '=', team.id).execute();
      const key = await createKey(team.id, 'full_access');
      return { teamId: team.id, ...key };
    },
    flush: gateway.flush,
    abandonedRequests: () => abandoned,
    setupLink: gateway.setupLink,
    async stop() {
      await gateway.stop();
      await database.drop();
      if (config.DASHBOARD_MAIL_FROM) {
        const { work, dead, tiers } = consumerQueueNames(
          config.BROKER_PREFIX,
          'api-gateway',
          'admin-notices',
          DEFAULT_RETRY_POLICY.tiersMs,
        );
        await deleteBrokerPrefix(config.AMQP_URL, config.BROKER_PREFIX, [work, dead, ...tiers.map((t) => t.queue)]);
      }
    },
  };
}

export type Answer = { status: number; headers: Headers; body: Record<string, unknown> };

export async function call(
  gw: Gateway,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(`${gw.url}${path}`, {
    method,
    headers,
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
