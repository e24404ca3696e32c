import { describe, expect, it, beforeAll, afterAll, jest } from '@jest/globals';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { sql } from 'kysely';
import { sequentialScans, startTcpProxy } from '@postline/testing';
import {
  createConsumer,
  createDb,
  createMessagingTables,
  createMetrics,
  createOutboxRelay,
  enqueue,
  enqueueCommand,
  enqueueEvent,
  newId,
  queueDepth,
  type OutboxMessage,
  type OutboxRelay,
  type OutboxRelayOptions,
} from '../src/index.ts';
import {
  createMessagingFixture,
  deliveredData,
  metricValue,
  SCHEMA,
  TEAM_ID,
  waitFor,
  type MessagingFixture,
  type TestDb,
} from './messaging-fixture.ts';

// The integration project's testTimeout is not applied per project by jest 30.
jest.setTimeout(30_000);

let fx: MessagingFixture;
/** A plain queue bound to every event, to count raw deliveries (no inbox deduplication in the way). */
let tap: { connection: ChannelModel; channel: Channel; received: Map<string, number> };
const relays: OutboxRelay[] = [];

beforeAll(async () => {
  fx = await createMessagingFixture();
  const broker = await fx.broker(); // declares the exchanges
  const connection = await amqp.connect(fx.amqpUrl);
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, broker.exchanges.events, '#');
  const received = new Map<string, number>();
  await channel.consume(
    queue,
    (msg) => {
      if (!msg) return;
      const id = String(msg.properties.messageId);
      received.set(id, (received.get(id) ?? 0) + 1);
    },
    { noAck: true },
  );
  tap = { connection, channel, received };
});

afterAll(async () => {
  await Promise.all(relays.map((r) => r.stop()));
  await tap.connection.close();
  await fx.close();
});

async function startRelay(
  broker: Awaited<ReturnType<MessagingFixture['broker']>>,
  batchSize = 100,
  extra: Partial<OutboxRelayOptions<TestDb>> = {},
) {
  const relay = createOutboxRelay({
    db: fx.db,
    databaseUrl: fx.database.url,
    broker,
    logger: fx.logger,
    schema: SCHEMA,
    batchSize,
    pollMs: 200,
    ...extra,
  });
  relays.push(relay);
  await relay.start();
  return relay;
}

/** The row is still waiting to be published: there, and not marked published. */
async function unpublished(id: string): Promise<boolean> {
  const row = await fx.db.selectFrom('outbox').select('published_at').where('id', '=', id).executeTakeFirst();
  return row !== undefined && row.published_at === null;
}

/** Whether a connection of `applicationName` has issued its LISTEN (and so will be notified of commits). */
async function listening(applicationName: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
    where application_name = ${applicationName} and query ilike 'listen%'`.execute(fx.db);
  return (rows[0]?.n ?? 0) > 0;
}

/** The relay removes a row once the broker has confirmed it. */
async function removed(id: string): Promise<boolean> {
  return (await fx.db.selectFrom('outbox').select('id').where('id', '=', id).executeTakeFirst()) === undefined;
}

describe('outbox relay', () => {
  it('publishes an event committed while RabbitMQ was unreachable once it is back, exactly once', async () => {
    const metrics = createMetrics('relay-test');
    const target = new URL(fx.amqpUrl);
    const proxy = await startTcpProxy(Number(target.port || 5672), target.hostname);
    const viaProxy = await fx.broker({ url: proxy.url(fx.amqpUrl), metrics });
    const relay = await startRelay(viaProxy);

    const direct = await fx.broker();
    const handled: string[] = [];
    const consumer = createConsumer({
      broker: direct,
      db: fx.db,
      service: 'relay-test',
      name: 'outage',
      bindings: [{ exchange: 'events', routingKey: 'email.delivered' }],
      handle: async (message) => {
        handled.push(message.id);
        return Promise.resolve();
      },
    });
    for (const q of [consumer.queues.work, consumer.queues.dead, ...consumer.queues.tiers.map((t) => t.queue)])
      fx.queues.add(q);
    await consumer.start();

    await proxy.cut();
    await waitFor('the relay broker to notice the outage', () => !viaProxy.isConnected());
    const envelope = await fx.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, 'email.delivered', TEAM_ID, deliveredData()));

    // Held for many of the relay's poll intervals while the broker is away, and still not published.
    // Several of the relay's 200 ms polls go by (the clock, not the gauges, whose read scans the table that
    // the index test below counts scans of).
    const enqueuedAt = Date.now();
    await waitFor('several poll intervals', () => Date.now() - enqueuedAt > 1_000);
    expect(await unpublished(envelope.id)).toBe(true);
    expect(handled).toEqual([]);
    expect(await metricValue(metrics.registry, 'outbox_pending_messages', { schema: SCHEMA })).toBe(1);
    expect(
      await metricValue(metrics.registry, 'outbox_oldest_pending_age_seconds', { schema: SCHEMA }),
    ).toBeGreaterThan(1);

    await proxy.restore();
    await waitFor('the consumer to receive the event', () => handled.includes(envelope.id));
    await waitFor('the row to be removed once published', async () => await removed(envelope.id));
    // A later event through the same relay and consumer: once it is handled, a second copy of the first
    // would have been too.
    const later = await fx.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, 'email.delivered', TEAM_ID, deliveredData()));
    await waitFor('the later event', () => handled.includes(later.id) && tap.received.has(later.id));
    expect(handled.filter((id) => id === envelope.id)).toHaveLength(1);
    expect(tap.received.get(envelope.id)).toBe(1);
    // The later row reaches its consumer a moment before its confirm comes back and the relay removes it.
    await waitFor(
      'nothing pending',
      async () => (await metricValue(metrics.registry, 'outbox_pending_messages', { schema: SCHEMA })) === 0,
    );

    await consumer.stop();
    await relay.stop();
    await proxy.close();
  });

  it('publishes nothing when the caller rolls its transaction back', async () => {
    const relay = await startRelay(await fx.broker());
    let rolledBack = '';
    await expect(
      fx.db.transaction().execute(async (trx) => {
        rolledBack = (await enqueueEvent(trx, 'email.delivered', TEAM_ID, deliveredData())).id;
        throw new Error('use case failed after enqueueing');
      }),
    ).rejects.toThrow('use case failed');
    // A later commit proves the relay is awake and publishing.
    const marker = await fx.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, 'email.delivered', TEAM_ID, deliveredData()));

    await waitFor('the committed marker', () => tap.received.has(marker.id));
    expect(rolledBack).not.toBe('');
    expect(tap.received.has(rolledBack)).toBe(false);
    const rows = await fx.db.selectFrom('outbox').select('id').where('id', '=', rolledBack).execute();
    expect(rows).toEqual([]);
    await relay.stop();
  });

  it('refuses data that breaks the contract, so the whole transaction rolls back', async () => {
    await expect(
      fx.db.transaction().execute((trx) =>
        enqueue(trx, [
          {
            exchange: 'events',
            type: 'email.delivered',
            team_id: TEAM_ID,
            data: { email_id: 'nope' },
          } as unknown as OutboxMessage,
        ]),
      ),
    ).rejects.toThrow(/refusing to enqueue email.delivered/);
  });

  it('parks a command nobody consumes yet instead of losing it or retrying it forever', async () => {
    const broker = await fx.broker();
    const relay = await startRelay(broker);
    const command = await fx.db
      .transaction()
      .execute((trx) => enqueueCommand(trx, 'scheduler.cancel-timer', TEAM_ID, { key: 'email:1:send' }));

    await waitFor('the row to be removed once published', async () => await removed(command.id));
    await waitFor('the parked command', async () => (await queueDepth(broker, broker.exchanges.unroutable)) === 1);
    const parked = await broker.withChannel((ch) => ch.get(broker.exchanges.unroutable, { noAck: true }));
    expect(parked && parked.fields.routingKey).toBe('scheduler.cancel-timer');
    expect(parked && parked.properties.messageId).toBe(command.id);
    await relay.stop();
  });

  it('publishes each row once when two relays run at once', async () => {
    const [ma, mb] = [createMetrics('relay-a'), createMetrics('relay-b')];
    const [a, b] = await Promise.all([fx.broker({ metrics: ma }), fx.broker({ metrics: mb })]);
    const pair = await Promise.all([startRelay(a, 7), startRelay(b, 7)]);
    const messages: OutboxMessage[] = Array.from({ length: 300 }, () => ({
      exchange: 'events',
      type: 'email.delivered',
      team_id: TEAM_ID,
      data: deliveredData(),
    }));
    const envelopes = await fx.db.transaction().execute((trx) => enqueue(trx, messages));
    const ids = envelopes.map((e) => e.id);

    await waitFor('all 300 events', () => ids.every((id) => tap.received.has(id)), 20_000);
    // One more row after them: once both relays have published it (or one has, and the other has nothing
    // left to claim), any second copy of the 300 would have reached the tap before it.
    const later = await fx.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, 'email.delivered', TEAM_ID, deliveredData()));
    await waitFor('the later event', () => tap.received.has(later.id));
    await waitFor('the later row to be removed', async () => await removed(later.id));
    expect(ids.filter((id) => tap.received.get(id) !== 1)).toEqual([]);
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from outbox where id = any(${ids}::uuid[])`.execute(fx.db);
    expect(rows[0]?.n).toBe(0);
    // Both relays did part of the work, and together they published each row exactly once.
    const byA = await metricValue(ma.registry, 'broker_messages_published_total', { exchange: 'events', result: 'ok' });
    const byB = await metricValue(mb.registry, 'broker_messages_published_total', { exchange: 'events', result: 'ok' });
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
    expect(byA + byB).toBe(301);
    await Promise.all(pair.map((relay) => relay.stop()));
  });

  it('wakes on commit through LISTEN/NOTIFY without waiting for the poll', async () => {
    const relay = await startRelay(await fx.broker(), 100, { pollMs: 60_000 });
    await waitFor('the relay to LISTEN', async () => await listening(`${SCHEMA}-outbox-listen`));
    // A first row, published by the notification or by the catch-up pass that follows the LISTEN: after
    // it, only a notification can wake the relay before its 60 s poll.
    const first = await fx.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, 'email.delivered', TEAM_ID, deliveredData()));
    await waitFor('the first publish', () => tap.received.has(first.id), 3_000);
    const started = Date.now();
    const envelope = await fx.db
      .transaction()
      .execute((trx) => enqueueEvent(trx, 'email.delivered', TEAM_ID, deliveredData()));

    await waitFor('the notified publish', () => tap.received.has(envelope.id), 3_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    await relay.stop(); // also interrupts the 60 s poll wait
  });

  it('claims through its index once the outbox has grown, with statements first planned while it was young', async () => {
    // Its own schema, touched by one connection only (the relay's, which the test's reads share), so that
    // every scan counted is this relay's or this test's, and flushed before each reading. One connection
    // also keeps the statements planned young the ones used later: Postgres keeps a generic plan until an
    // analyze, which never comes without autovacuum.
    const schema = 'relay_grown';
    const { db: one } = createDb<TestDb>({ url: fx.database.url, schema, max: 1 });
    await sql`create schema ${sql.id(schema)}`.execute(one);
    await createMessagingTables(one);
    const broker = await fx.broker();
    const relay = createOutboxRelay({
      db: one,
      databaseUrl: fx.database.url,
      broker,
      logger: fx.logger,
      schema,
      pollMs: 50,
    });
    const scans = () => sequentialScans(one, schema, ['outbox']);
    const publishOne = async () => {
      const [envelope] = await one
        .transaction()
        .execute((trx) =>
          enqueue(trx, [{ exchange: 'events', type: 'email.delivered', team_id: TEAM_ID, data: deliveredData() }]),
        );
      await waitFor('the row to be tapped', () => tap.received.has(envelope!.id));
      await waitFor('the row to be removed once published', async () => {
        const row = await one.selectFrom('outbox').select('id').where('id', '=', envelope!.id).executeTakeFirst();
        return row === undefined;
      });
    };
    await relay.start();
    try {
      for (let i = 0; i < 8; i++) await publishOne();
      // Rows an earlier relay marked published, as a table grows where nothing vacuums or analyzes it.
      await sql`insert into outbox (id, exchange, routing_key, envelope, published_at)
        select gen_random_uuid(), 'events', 'email.delivered', '{}', now() from generate_series(1, 30000)`.execute(one);
      const before = await scans();
      for (let i = 0; i < 6; i++) await publishOne();
      expect(await scans()).toEqual(before);
    } finally {
      await relay.stop();
      await sql`drop schema ${sql.id(schema)} cascade`.execute(one);
      await one.destroy();
    }
  });

  it('prunes published rows past their retention and leaves unpublished ones', async () => {
    await fx.db
      .insertInto('outbox')
      .values({
        id: newId(),
        exchange: 'events',
        routing_key: 'email.delivered',
        envelope: '{}',
        published_at: new Date(Date.now() - 3_600_000),
      })
      .execute();
    const broker = await fx.broker();
    // With its broker stopped the relay cannot publish: the unpublished row must survive the pruning.
    const stale = newId();
    await fx.db
      .insertInto('outbox')
      .values({ id: stale, exchange: 'events', routing_key: 'email.delivered', envelope: '{}' })
      .execute();
    await broker.stop();
    const relay = await startRelay(broker, 100, { retentionMs: 60_000, pruneEveryMs: 0 });

    await waitFor('old published rows to be pruned', async () => {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from outbox where published_at < now() - interval '1 minute'`.execute(fx.db);
      return rows[0]?.n === 0;
    });
    expect(await unpublished(stale)).toBe(true);
    await relay.stop();
    await fx.db.deleteFrom('outbox').where('id', '=', stale).execute();
  });
});
