import type { ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createDb, createLogger, createMetrics, listen, newId, type Listening } from '@postline/platform';
import { createTestDatabase, freePort, infraFromEnv, uniqueName, waitFor, type TestDatabase } from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { findApiKeyWithTeam } from '../src/db/api-keys.ts';
import { createKeyCache } from '../src/db/key-cache.ts';
import { migrate } from '../src/db/migrate.ts';
import type { GatewayDb } from '../src/db/schema.ts';
import { insertTeam, teamHasAccess } from '../src/db/teams.ts';
import type { Owners } from '../src/domain/routes.ts';
import { createGatewayApp } from '../src/http/app.ts';
import { watchKeyChanges } from '../src/jobs/key-change-listener.ts';
import { createKeyUsageTracker } from '../src/jobs/key-usage.ts';
import { createRequestLogWriter } from '../src/jobs/request-log-writer.ts';
import { createGatewayMetrics } from '../src/metrics.ts';
import { createDomainExists } from '../src/owners/domain-exists.ts';
import { issueApiKey } from '../src/use-cases/api-keys.ts';

export type Gateway = {
  url: string;
  db: Kysely<GatewayDb>;
  createTeam: (opts?: { rateLimit?: number }) => Promise<{ teamId: string; apiKey: string; keyId: string }>;
  createKey: (
    teamId: string,
    permission: 'full_access' | 'sending_access',
  ) => Promise<{ apiKey: string; keyId: string }>;
  flush: () => Promise<void>;
  /** Requests whose client went away before the answer was sent, as the gateway's server saw them. */
  abandonedRequests: () => number;
  stop: () => Promise<void>;
};

/** The real gateway app on a random port, over its own fresh database and Redis prefix. */
export async function startGateway(
  opts: {
    rateLimitPerSecond?: number;
    publicLinkPerSecond?: number;
    owners?: Partial<Record<string, string>>;
    redisUrl?: string;
  } = {},
): Promise<Gateway> {
  const database: TestDatabase = await createTestDatabase('gw');
  // Nothing listens here: owners are unreachable (connection refused) unless a test gives real ones.
  const NOWHERE = `http://127.0.0.1:${await freePort()}`;
  const { db } = createDb<GatewayDb>({ url: database.url, schema: SCHEMA, max: 5 });
  await migrate(db);
  const redis = new Redis(opts.redisUrl ?? infraFromEnv().redisUrl, {
    commandTimeout: 250,
    maxRetriesPerRequest: 1,
    enableAutoPipelining: true,
  });
  redis.on('error', () => undefined);
  const logger = createLogger({ service: 'api-gateway-test', level: 'silent' });
  const requestLogs = createRequestLogWriter({ db, logger, flushIntervalMs: 20 });
  const keys = createKeyCache({ load: (hash) => findApiKeyWithTeam(db, hash) });
  const teamAccess = createKeyCache<boolean>({ load: (teamId) => teamHasAccess(db, teamId) });
  const keyWatch = watchKeyChanges({ databaseUrl: database.url, schema: SCHEMA, logger, caches: [keys, teamAccess] });
  const keyUsage = createKeyUsageTracker({ db, logger, flushIntervalMs: 20 });
  const owners: Owners = {
    sender: opts.owners?.sender ?? NOWHERE,
    'inbound-smtp': opts.owners?.['inbound-smtp'] ?? NOWHERE,
    'webhook-dispatcher': opts.owners?.['webhook-dispatcher'] ?? NOWHERE,
    'domain-verifier': opts.owners?.['domain-verifier'] ?? NOWHERE,
  };
  const metrics = createMetrics('api-gateway');
  const http = createGatewayApp({
    db,
    redis,
    redisPrefix: uniqueName('gw'),
    logger,
    metrics,
    gatewayMetrics: createGatewayMetrics(metrics.registry),
    owners,
    domainExists: createDomainExists(owners),
    rateLimitPerSecond: opts.rateLimitPerSecond ?? 1000,
    publicLinkPerSecond: opts.publicLinkPerSecond ?? 1000,
    requestLogs,
    markKeyUsed: keyUsage.markUsed,
    keys,
    teamAccess,
    now: () => new Date(),
  });
  requestLogs.start();
  keyUsage.start();
  const server: Listening = await listen(http.app, 0, '127.0.0.1');
  // A response's close listeners run in one emit: once a test sees this count move, the app's own close
  // handlers for that request (the idempotency middleware's) have run too.
  let abandoned = 0;
  server.server.on('request', (_req, res: ServerResponse) => {
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
    });
  });
  await waitFor('the key-change listener', () => keyWatch.isListening());

  const createKey = async (teamId: string, permission: 'full_access' | 'sending_access') => {
    const { key, token } = await issueApiKey(db, { teamId, name: 'test', permission, domainId: null });
    return { apiKey: token, keyId: key.id };
  };
  return {
    url: `http://127.0.0.1:${server.port}`,
    db,
    createKey,
    async createTeam(o = {}) {
      const team = await insertTeam(db, { id: newId(), name: 'team' });
      if (o.rateLimit !== undefined)
        await db.updateTable('teams').set({ rate_limit_per_second: o.rateLimit }).where('id', '=', team.id).execute();
      const key = await createKey(team.id, 'full_access');
      return { teamId: team.id, ...key };
    },
    async flush() {
      await requestLogs.flush();
      await keyUsage.flush();
    },
    abandonedRequests: () => abandoned,
    async stop() {
      await server.stop(1000);
      await requestLogs.stop();
      await keyUsage.stop();
      await keyWatch.stop();
      redis.disconnect();
      await db.destroy();
      await database.drop();
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
