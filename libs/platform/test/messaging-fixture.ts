import amqp from 'amqplib';
import { sql, type Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import { createTestDatabase, infraFromEnv, uniqueName, type TestDatabase } from '@postline/testing';
import {
  createBroker,
  createDb,
  createLogger,
  createMessagingTables,
  type Broker,
  type BrokerOptions,
  type MessagingTables,
} from '../src/index.ts';

export const SCHEMA = 'svc';
export { TEST_TEAM_ID as TEAM_ID } from '@postline/testing';

export type TestDb = MessagingTables & { effects: { consumer: string; message_id: string } };

export type MessagingFixture = {
  db: Kysely<TestDb>;
  database: TestDatabase;
  prefix: string;
  amqpUrl: string;
  logger: ReturnType<typeof createLogger>;
  /** A broker on this file's prefix; stopped in `close`. */
  broker(overrides?: Partial<BrokerOptions>): Promise<Broker>;
  /** Queues to delete in `close`, besides the prefix's exchanges and unroutable queue. */
  queues: Set<string>;
  close(): Promise<void>;
};

/** A fresh database with the messaging tables in schema `svc`, and a unique broker prefix. */
export async function createMessagingFixture(): Promise<MessagingFixture> {
  const infra = infraFromEnv();
  const database = await createTestDatabase();
  const { db } = createDb<TestDb>({ url: database.url, schema: SCHEMA });
  await sql`create schema ${sql.id(SCHEMA)}`.execute(db);
  await createMessagingTables(db);
  await sql`create table effects (consumer text not null, message_id uuid not null)`.execute(db);
  const prefix = uniqueName('t');
  const logger = createLogger({ service: 'platform-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const brokers: Broker[] = [];
  const queues = new Set<string>();

  return {
    db,
    database,
    prefix,
    amqpUrl: infra.amqpUrl,
    logger,
    queues,
    async broker(overrides = {}) {
      const broker = createBroker({
        url: infra.amqpUrl,
        prefix,
        logger,
        reconnect: { minMs: 50, maxMs: 200 },
        ...overrides,
      });
      brokers.push(broker);
      await broker.start();
      return broker;
    },
    async close() {
      await Promise.all(brokers.map((b) => b.stop()));
      const connection = await amqp.connect(infra.amqpUrl);
      try {
        const ch = await connection.createChannel();
        for (const queue of [...queues, `${prefix}.unroutable`]) await ch.deleteQueue(queue);
        for (const exchange of ['events', 'commands', 'unroutable']) await ch.deleteExchange(`${prefix}.${exchange}`);
        await ch.close();
      } finally {
        await connection.close();
      }
      await db.destroy();
      await database.drop();
    },
  };
}

export { deliveredData, deliveredEnvelope } from '@postline/testing';
export { waitFor, sleep } from '@postline/testing';

/** Sum of the samples of metric `name` (or its `sample`, e.g. `..._count`) whose labels include `labels`. */
export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
  sample = name,
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((v) => ((v as { metricName?: string }).metricName ?? name) === sample)
    .filter((v) => Object.entries(labels).every(([k, val]) => (v.labels as Record<string, unknown>)[k] === val))
    .reduce((sum, v) => sum + v.value, 0);
}
