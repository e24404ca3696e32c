// Dead letters an operator can act on: `npm run admin -- dead-letters list | show | redrive` against the
// running system and a real RabbitMQ. A message that fails validation lands in its consumer's dead-letter
// queue, is counted by list and in the owning service's /metrics, is shown with the reason it died without
// being removed, and a redrive puts it back once, where a fixed consumer handles it.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import amqp from 'amqplib';
import pg from 'pg';
import { SERVICE_NAMES } from '@postline/contracts';
import {
  createBroker,
  createConsumer,
  createDb,
  createLogger,
  createMessagingTables,
  PermanentError,
  type Broker,
  type Consumer,
  type MessagingTables,
} from '@postline/platform';
import {
  createTestDatabase,
  deliveredEnvelope,
  infraFromEnv,
  observeBroker,
  startSystem,
  waitFor,
  type BrokerObserver,
  type System,
  type TestDatabase,
} from '@postline/testing';

const CLI = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'services',
  'api-gateway',
  'src',
  'admin',
  'cli.ts',
);
const SCHEMA = 'redrive_test';

let system: System;
let events: BrokerObserver;
let prefix: string;
let database: TestDatabase;
let broker: Broker;
const consumers: Consumer[] = [];
const declared = new Set<string>();

type Line = Record<string, unknown>;

/** Runs the admin CLI with the system's environment; its JSON lines. */
function admin(...args: string[]): Line[] {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: system.env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`admin ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Line);
}

/** `broker_queue_messages` of `queue` (kind dead) as `service` reports it on /metrics. */
async function deadGauge(service: (typeof SERVICE_NAMES)[number], queue: string): Promise<number | undefined> {
  const text = await (await fetch(`${system.services[service].url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`broker_queue_messages{queue="${queue}",kind="dead"`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

beforeAll(async () => {
  system = await startSystem();
  prefix = String(system.env.BROKER_PREFIX);
  events = await observeBroker({ amqpUrl: infraFromEnv().amqpUrl, prefix, bindings: [] });
  // A consumer of our own on the system's broker, on its own database, to be "fixed" between two runs.
  database = await createTestDatabase('redrive');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`create schema ${SCHEMA}`);
  await client.end();
  broker = createBroker({
    url: infraFromEnv().amqpUrl,
    prefix,
    logger: createLogger({ service: 'dead-letters-test', level: 'silent' }),
  });
  await broker.start();
}, 90_000);

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  await broker?.stop();
  await events?.close();
  const connection = await amqp.connect(infraFromEnv().amqpUrl);
  const ch = await connection.createChannel();
  for (const queue of declared) await ch.deleteQueue(queue);
  await connection.close();
  await system?.stop();
  await database?.drop();
}, 60_000);

describe('dead-letters admin commands', () => {
  it('lists every consumer queue the services run, with its dead-letter count', async () => {
    const listed = admin('dead-letters', 'list');
    const names = listed.map((l) => String(l.dead_queue)).sort();
    // The dead-letter queues the running services report on /metrics (their consumers start just after
    // /readyz answers 200): list knows each of them, and no other.
    const reported = async () => {
      const queues = new Set<string>();
      for (const name of SERVICE_NAMES) {
        const text = await (await fetch(`${system.services[name].url}/metrics`)).text();
        for (const match of text.matchAll(/broker_queue_messages\{queue="([^"]+)",kind="dead"[,}]/g))
          queues.add(String(match[1]));
      }
      return [...queues].sort();
    };
    await waitFor('every consumer to report its queues', async () => (await reported()).length >= names.length, 15_000);
    expect(await reported()).toEqual(names);
    for (const line of listed) expect(line.dead_letters).toBe(0);
  });

  it('counts, shows without removing, and redrives a message that failed validation in a service', async () => {
    const queue = `${prefix}.sender.domain-state`;
    // A domain state with no fields: the contract refuses it, so the sender's consumer dead-letters it at once.
    const id = events.publishEvent('internal.domain.state', null, { domain_id: 'not-a-domain' });
    await waitFor(
      'the dead letter',
      () => admin('dead-letters', 'list', '--queue', 'sender.domain-state')[0]?.dead_letters === 1,
      15_000,
    );
    expect(admin('dead-letters', 'list', '--queue', queue)).toEqual([
      { queue, dead_queue: `${queue}.dead`, dead_letters: 1 },
    ]);
    expect(await deadGauge('sender', `${queue}.dead`)).toBe(1);

    const [letter, summary] = admin('dead-letters', 'show', '--queue', queue);
    expect(letter).toMatchObject({
      queue,
      message_id: id,
      type: 'internal.domain.state',
      team_id: null,
      reason: 'invalid',
      deaths: 1,
    });
    expect(String(letter?.error)).toMatch(/domain_id|invalid/i);
    expect(letter?.first_dead_at).toBe(letter?.last_dead_at);
    expect(summary).toEqual({ queue, shown: 1, dead_letters: 1 });
    // Shown, not taken: a second show reads the same message, and it is still counted.
    expect(admin('dead-letters', 'show', '--queue', `${queue}.dead`)[0]).toEqual(letter);
    expect(await deadGauge('sender', `${queue}.dead`)).toBe(1);

    // Still invalid, so the consumer dead-letters it again: its first death stays, the count goes to 2.
    const redriven = admin('dead-letters', 'redrive', '--queue', queue);
    expect(redriven[0]).toEqual({ ...letter, redriven: true });
    expect(redriven[1]).toMatchObject({ queue, redriven: 1 });
    await waitFor('the second death', () => admin('dead-letters', 'show', '--queue', queue)[0]?.deaths === 2, 15_000);
    const [again] = admin('dead-letters', 'show', '--queue', queue);
    expect(again).toMatchObject({ message_id: id, reason: 'invalid', deaths: 2, first_dead_at: letter?.first_dead_at });
    expect(String(again?.last_dead_at) > String(letter?.last_dead_at)).toBe(true);
    expect(again?.redriven_at).toEqual(expect.any(String));
  });

  it('redrives to a fixed consumer, which handles the message once', async () => {
    const { db } = createDb<MessagingTables>({ url: database.url, schema: SCHEMA });
    await createMessagingTables(db);
    const handled: string[] = [];
    const consumerOf = (handle: () => void) =>
      createConsumer<MessagingTables, 'email.delivered'>({
        broker,
        db,
        service: 'redrive-test',
        name: 'delivered',
        bindings: [{ exchange: 'events', routingKey: 'email.delivered' }],
        retry: { tiersMs: [100], maxAttempts: 2 },
        handle: (message) => {
          handle();
          handled.push(message.id);
          return Promise.resolve();
        },
      });
    const strict = consumerOf(() => {
      throw new PermanentError('subject "Hello" is not allowed');
    });
    for (const q of [strict.queues.work, strict.queues.dead, ...strict.queues.tiers.map((t) => t.queue)])
      declared.add(q);
    consumers.push(strict);
    await strict.start();
    const envelope = deliveredEnvelope();
    const published = await broker.publish(
      broker.exchanges.events,
      'email.delivered',
      Buffer.from(JSON.stringify(envelope)),
      { messageId: envelope.id },
    );
    expect(published).toEqual({ ok: true });
    await waitFor(
      'the dead letter',
      () => admin('dead-letters', 'list', '--queue', strict.queues.work)[0]?.dead_letters === 1,
      15_000,
    );
    const [letter] = admin('dead-letters', 'show', '--queue', 'redrive-test.delivered');
    expect(letter).toMatchObject({
      message_id: envelope.id,
      type: 'email.delivered',
      team_id: envelope.team_id,
      reason: 'permanent',
    });
    expect(letter?.error).toBe('PermanentError: subject "Hello" is not allowed');
    expect(handled).toEqual([]);

    await strict.stop();
    const fixed = consumerOf(() => undefined);
    consumers.push(fixed);
    await fixed.start();
    const lines = admin('dead-letters', 'redrive', '--queue', strict.queues.work, '--limit', '5');
    expect(lines.at(-1)).toEqual({ queue: strict.queues.work, redriven: 1, dead_letters: 0 });
    await waitFor('the fixed consumer to handle the message', () => handled.length === 1, 15_000);
    expect(handled).toEqual([envelope.id]);
    expect(admin('dead-letters', 'list', '--queue', strict.queues.work)[0]?.dead_letters).toBe(0);
    await fixed.stop();
    await db.destroy();
  });

  it('answers a usage error with exit code 2', async () => {
    // The four runs side by side (each a process of its own).
    const run = (args: string[]) =>
      new Promise<{ args: string[]; status: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [CLI, ...args], { env: system.env, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.once('error', reject);
        child.once('close', (status) => resolve({ args, status, stderr }));
      });
    const [missing, ...usage] = await Promise.all([
      run(['dead-letters', 'show', '--queue', 'no-such.queue']),
      ...[
        ['dead-letters', 'show'],
        ['dead-letters', 'redrive', '--queue', 'sender.deliver', '--limit', '0'],
        ['dead-letters', 'purge'],
      ].map(run),
    ]);
    for (const { args, status } of usage) expect({ args, status }).toEqual({ args, status: 2 });
    expect(missing?.status).toBe(2);
    expect(missing?.stderr).toMatch(/no queue/);
  });
});
