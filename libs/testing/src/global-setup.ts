import { dockerAvailable } from './infra.ts';
import { sharedSystemsUrl, startSharedSystems } from './shared-system.ts';

type Started = { stop: () => Promise<unknown> };
const started: Started[] = [];

/**
 * jest globalSetup: when a URL is missing and Docker runs, start that server with testcontainers and
 * export its URL to the test workers (forked after this runs, so they inherit process.env); then open the
 * control channel of the run's shared systems (started when a file first asks, see `useSystem`).
 */
export default async function globalSetup(): Promise<void> {
  await startServers();
  const shared = await startSharedSystems();
  started.push(shared);
  Object.assign(process.env, sharedSystemsUrl(shared.url));
  (globalThis as { __postlineContainers?: Started[] }).__postlineContainers = started;
}

async function startServers(): Promise<void> {
  const missing = ['DATABASE_URL', 'AMQP_URL', 'REDIS_URL'].filter((k) => !process.env[k]);
  if (missing.length === 0) return;
  if (!dockerAvailable()) {
    throw new Error(`${missing.join(', ')} not set and no Docker engine for testcontainers`);
  }
  const { GenericContainer, Wait } = await import('testcontainers');
  if (!process.env.DATABASE_URL) {
    const pg = await new GenericContainer('postgres:17')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    started.push(pg);
    process.env.DATABASE_URL = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
  }
  if (!process.env.AMQP_URL) {
    const mq = await new GenericContainer('rabbitmq:4')
      .withExposedPorts(5672)
      .withWaitStrategy(Wait.forLogMessage(/Server startup complete/))
      .start();
    started.push(mq);
    process.env.AMQP_URL = `amqp://guest:guest@${mq.getHost()}:${mq.getMappedPort(5672)}`;
  }
  if (!process.env.REDIS_URL) {
    const redis = await new GenericContainer('redis:7').withExposedPorts(6379).start();
    started.push(redis);
    process.env.REDIS_URL = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
  }
}
