import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import type { MessageEnvelope } from '@postline/contracts';
import {
  consumerQueueNames,
  createBroker,
  createDb,
  createLogger,
  DEFAULT_RETRY_POLICY,
  newId,
  type Broker,
  type ConsumerQueueNames,
} from '@postline/platform';
import {
  createTestDatabase,
  freePort,
  infraFromEnv,
  deliveredEnvelope,
  TEST_TEAM_ID,
  uniqueName,
  waitFor,
  type TestDatabase,
} from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import type { SchedulerDb } from '../src/db/schema.ts';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
export const TEAM_ID = TEST_TEAM_ID;

/** One scheduler process: the real `src/main.ts`. */
export type SchedulerProcess = {
  url: string;
  process: ChildProcess;
  output: string[];
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  metrics(): Promise<string>;
};

/** What a test's queue bound to the events exchange received, in arrival order. */
export type Received = { envelope: MessageEnvelope; routingKey: string; messageId: unknown; at: number };

export type SchedulerFixture = {
  db: Kysely<SchedulerDb>;
  database: TestDatabase;
  prefix: string;
  broker: Broker;
  /** The scheduler's command queues. */
  queues: ConsumerQueueNames;
  received: Received[];
  /** Spawns a scheduler on this file's database and prefix; resolves once its consumer is attached. */
  start(): Promise<SchedulerProcess>;
  /** Publishes `scheduler.set-timer`; resolves to the command envelope. */
  set(
    data: { key: string; due_at: string; routing_key?: string; message?: unknown },
    id?: string,
  ): Promise<{ id: string }>;
  cancel(key: string, id?: string): Promise<{ id: string }>;
  /** Waits until the scheduler committed the command (its id is in the inbox). */
  handled(commandId: string): Promise<void>;
  /**
   * Publishes a marker event straight to the events exchange and waits until the test queue received it:
   * whatever was published before it (every outbox row marked published) has arrived by then.
   */
  passMarker(): Promise<void>;
  close(): Promise<void>;
};

/** A fresh database with the scheduler's migrations, a unique broker prefix, and a queue that records fired `email.*` events. */
export async function createSchedulerFixture(): Promise<SchedulerFixture> {
  const infra = infraFromEnv();
  const database = await createTestDatabase('sched');
  const { db } = createDb<SchedulerDb>({ url: database.url, schema: SCHEMA });
  await migrate(db);
  const prefix = uniqueName('sched');
  const logger = createLogger({ service: 'scheduler-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const broker = createBroker({ url: infra.amqpUrl, prefix, logger, reconnect: { minMs: 50, maxMs: 200 } });
  await broker.start();
  const queues = consumerQueueNames(prefix, 'scheduler', 'timer-commands', DEFAULT_RETRY_POLICY.tiersMs);
  const firedQueue = `${prefix}.test.fired`;
  const received: Received[] = [];
  await broker.addSetup(async (connection) => {
    const ch = await connection.createChannel();
    await ch.assertQueue(firedQueue, { durable: false, exclusive: true });
    await ch.bindQueue(firedQueue, broker.exchanges.events, 'email.*');
    await ch.consume(
      firedQueue,
      (msg) => {
        if (!msg) return;
        received.push({
          envelope: JSON.parse(msg.content.toString('utf8')) as MessageEnvelope,
          routingKey: msg.fields.routingKey,
          messageId: msg.properties.messageId,
          at: Date.now(),
        });
      },
      { noAck: true },
    );
  });
  const running = new Set<SchedulerProcess>();

  async function consumerCount(): Promise<number> {
    try {
      return await broker.withChannel(async (ch) => (await ch.checkQueue(queues.work)).consumerCount);
    } catch {
      return 0; // not declared yet
    }
  }

  async function publishCommand(type: string, data: unknown, id: string): Promise<{ id: string }> {
    const envelope = { id, type, version: 1, occurred_at: new Date().toISOString(), team_id: TEAM_ID, data };
    const publish = () =>
      broker.publish(broker.exchanges.commands, type, Buffer.from(JSON.stringify(envelope)), { messageId: id, type });
    // An unconfirmed publish may still have landed: the same command again is what a service's outbox does,
    // and the scheduler applies it once.
    let result = await publish();
    for (let retry = 0; retry < 3 && !result.ok && result.reason === 'timeout'; retry++) result = await publish();
    if (!result.ok) throw new Error(`publish ${type} failed: ${result.reason}`);
    return { id };
  }

  return {
    db,
    database,
    prefix,
    broker,
    queues,
    received,
    async start() {
      const port = await freePort();
      const output: string[] = [];
      const child = spawn(process.execPath, [MAIN], {
        env: {
          ...process.env,
          NODE_ENV: 'test',
          LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
          DATABASE_URL: database.url,
          AMQP_URL: infra.amqpUrl,
          BROKER_PREFIX: prefix,
          HTTP_PORT: String(port),
          SHUTDOWN_TIMEOUT_MS: '5000',
          // As the test systems: the other jest worker's systems share Postgres's 100 connections.
          DATABASE_POOL_SIZE: '4',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.on('data', (d: Buffer) => output.push(d.toString()));
      child.stderr?.on('data', (d: Buffer) => output.push(d.toString()));
      const url = `http://127.0.0.1:${port}`;
      const proc: SchedulerProcess = {
        url,
        process: child,
        output,
        stop: () =>
          new Promise((resolve) => {
            running.delete(proc);
            if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
            child.once('exit', (code) => resolve(code));
            child.kill('SIGTERM');
          }),
        async metrics() {
          const r = await fetch(`${url}/metrics`);
          if (!r.ok) throw new Error(`/metrics answered ${r.status}`);
          return r.text();
        },
      };
      running.add(proc);
      const expected = running.size;
      await waitFor(
        'the scheduler consumer to attach',
        async () => {
          if (child.exitCode !== null) throw new Error(`scheduler exited early:\n${output.join('')}`);
          return (await consumerCount()) >= expected;
        },
        90_000,
      );
      return proc;
    },
    set(data, id = newId()) {
      return publishCommand(
        'scheduler.set-timer',
        { routing_key: 'email.delivered', message: deliveredEnvelope(), ...data },
        id,
      );
    },
    cancel(key, id = newId()) {
      return publishCommand('scheduler.cancel-timer', { key }, id);
    },
    async handled(commandId) {
      await waitFor(`command ${commandId} to be handled`, async () => {
        const row = await db
          .selectFrom('inbox')
          .select('message_id')
          .where('message_id', '=', commandId)
          .executeTakeFirst();
        return row !== undefined;
      });
    },
    async passMarker() {
      const marker = deliveredEnvelope();
      const result = await broker.publish(broker.exchanges.events, marker.type, Buffer.from(JSON.stringify(marker)), {
        messageId: marker.id,
        type: marker.type,
      });
      if (!result.ok) throw new Error(`publish marker failed: ${result.reason}`);
      await waitFor(`marker ${marker.id}`, () => received.some((r) => r.envelope.id === marker.id));
    },
    async close() {
      await Promise.all([...running].map((p) => p.stop()));
      await broker.withChannel(async (ch) => {
        for (const queue of [queues.work, queues.dead, ...queues.tiers.map((t) => t.queue), `${prefix}.unroutable`]) {
          await ch.deleteQueue(queue);
        }
        for (const exchange of ['events', 'commands', 'unroutable']) await ch.deleteExchange(`${prefix}.${exchange}`);
      });
      await broker.stop();
      await db.destroy();
      await database.drop();
    },
  };
}

export { deliveredEnvelope };

/** An ISO timestamp `ms` from now (negative: in the past). */
export function inMs(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

export { waitFor } from '@postline/testing';

/**
 * Sum of the samples of `name` in a Prometheus text exposition whose labels include `labels`
 * (`scheduler_timer_lag_seconds_bucket`, `{ le: '1' }`).
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = new Map([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) sum += Number(match[3]);
  }
  return sum;
}
