import { describe, expect, it, beforeAll, afterAll, jest } from '@jest/globals';
import { sql, type Transaction } from 'kysely';
import {
  createConsumer,
  createMetrics,
  PermanentError,
  queueDepth,
  type BatchOptions,
  type Broker,
  type Consumer,
  type ConsumerOptions,
  type Metrics,
} from '../src/index.ts';
import {
  createMessagingFixture,
  deliveredEnvelope,
  metricValue,
  waitFor,
  type MessagingFixture,
  type TestDb,
} from './messaging-fixture.ts';

jest.setTimeout(30_000);

let fx: MessagingFixture;
let broker: Broker;
let metrics: Metrics;
const consumers: Consumer[] = [];

beforeAll(async () => {
  fx = await createMessagingFixture();
  metrics = createMetrics('consumer-batch-test');
  broker = await fx.broker({ metrics });
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  await fx.close();
});

type Handle = ConsumerOptions<TestDb, 'email.delivered'>['handle'];
type Batch = BatchOptions<TestDb, 'email.delivered'>;

async function txid(trx: Transaction<TestDb>): Promise<string> {
  const { rows } = await sql<{ id: string }>`select txid_current()::text as id`.execute(trx);
  return rows[0]!.id;
}

async function startConsumer(
  name: string,
  handle: Handle,
  batch: Batch,
  extra: { inbox?: boolean } = {},
): Promise<Consumer> {
  const consumer = createConsumer({
    broker,
    db: fx.db,
    service: 'svc',
    name,
    bindings: [{ exchange: 'events', routingKey: 'email.delivered' }],
    prefetch: 32,
    retry: { tiersMs: [100], maxAttempts: 2 },
    handle,
    batch,
    ...extra,
  });
  for (const q of [consumer.queues.work, consumer.queues.dead, ...consumer.queues.tiers.map((t) => t.queue)])
    fx.queues.add(q);
  consumers.push(consumer);
  await consumer.start();
  return consumer;
}

async function publishAll(envelopes: { id: string }[]): Promise<void> {
  const results = await Promise.all(
    envelopes.map((e) =>
      broker.publish(broker.exchanges.events, 'email.delivered', Buffer.from(JSON.stringify(e)), { messageId: e.id }),
    ),
  );
  expect(results.every((r) => r.ok)).toBe(true);
}

async function effects(name: string): Promise<string[]> {
  const { rows } = await sql<{ message_id: string }>`select message_id from effects where consumer = ${name}`.execute(
    fx.db,
  );
  return rows.map((r) => r.message_id).sort();
}

function outcomes(name: string, outcome: string): Promise<number> {
  return metricValue(
    metrics.registry,
    'broker_message_handle_duration_seconds',
    { consumer: `svc.${name}`, outcome },
    'broker_message_handle_duration_seconds_count',
  );
}

function insertEffects(name: string, trx: Transaction<TestDb>, ids: string[]) {
  return trx
    .insertInto('effects')
    .values(ids.map((message_id) => ({ consumer: name, message_id })))
    .execute();
}

describe('consumer with batch', () => {
  it('handles the messages of a batch in one transaction with one handler call, and acks them all after it commits', async () => {
    const calls: { tx: string; ids: string[] }[] = [];
    const consumer = await startConsumer(
      'batched',
      () => Promise.reject(new Error('the per-message handler is only for a failed batch')),
      {
        maxMessages: 5,
        maxWaitMs: 1_000,
        handle: async (items, trx) => {
          const ids = items.map((i) => i.message.id);
          calls.push({ tx: await txid(trx), ids });
          await insertEffects('batched', trx, ids);
        },
      },
    );
    const envelopes = Array.from({ length: 10 }, () => deliveredEnvelope());
    await publishAll(envelopes);

    await waitFor('every message acked', async () => (await outcomes('batched', 'ok')) === 10);
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.ids.length === 5)).toBe(true);
    expect(new Set(calls.map((c) => c.tx)).size).toBe(2);
    // The inbox rows were written in the batch's own transaction.
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from inbox where consumer = 'svc.batched'`.execute(fx.db);
    expect(rows[0]?.n).toBe(10);
    expect(await effects('batched')).toEqual(envelopes.map((e) => e.id).sort());
    expect(await queueDepth(broker, consumer.queues.work)).toBe(0);
    expect(
      await metricValue(
        metrics.registry,
        'broker_batch_messages',
        { consumer: 'svc.batched' },
        'broker_batch_messages_count',
      ),
    ).toBe(2);
  });

  it('runs the per-message handler for each message in the one batch transaction when there is no batch handler', async () => {
    const txs: string[] = [];
    await startConsumer(
      'per-message',
      async (message, trx) => {
        txs.push(await txid(trx));
        await insertEffects('per-message', trx, [message.id]);
      },
      { maxMessages: 4, maxWaitMs: 1_000 },
    );
    const envelopes = Array.from({ length: 4 }, () => deliveredEnvelope());
    await publishAll(envelopes);

    await waitFor('every message acked', async () => (await outcomes('per-message', 'ok')) === 4);
    expect(txs).toHaveLength(4);
    expect(new Set(txs).size).toBe(1);
    expect(await effects('per-message')).toEqual(envelopes.map((e) => e.id).sort());
  });

  it('gives a redelivered message no second effect, whether it was handled in an earlier batch or comes twice in one', async () => {
    const seen: string[] = [];
    await startConsumer('dedupe', () => Promise.reject(new Error('unexpected')), {
      maxMessages: 4,
      maxWaitMs: 300,
      handle: async (items, trx) => {
        const ids = items.map((i) => i.message.id);
        seen.push(...ids);
        await insertEffects('dedupe', trx, ids);
      },
    });
    const old = deliveredEnvelope();
    await publishAll([old]);
    await waitFor('the first handling', async () => (await outcomes('dedupe', 'ok')) === 1);

    const twin = deliveredEnvelope();
    const fresh = deliveredEnvelope();
    // One batch of four: an id handled before, a new id twice, and one more new id.
    await publishAll([old, twin, twin, fresh]);
    await waitFor(
      'the batch to settle',
      async () => (await outcomes('dedupe', 'ok')) + (await outcomes('dedupe', 'duplicate')) === 5,
    );

    expect(await outcomes('dedupe', 'ok')).toBe(3);
    expect(await outcomes('dedupe', 'duplicate')).toBe(2);
    expect(seen.sort()).toEqual([old.id, twin.id, fresh.id].sort());
    expect(await effects('dedupe')).toEqual([old.id, twin.id, fresh.id].sort());
  });

  it('without an inbox hands every delivery, redeliveries included, to a handler that deduplicates by itself', async () => {
    const seen: string[] = [];
    await startConsumer(
      'no-inbox',
      () => Promise.reject(new Error('unexpected')),
      {
        maxMessages: 4,
        maxWaitMs: 300,
        handle: async (items, trx) => {
          const ids = items.map((i) => i.message.id);
          seen.push(...ids);
          await sql`insert into effects (consumer, message_id) select 'no-inbox', id from unnest(${ids}::uuid[]) as id
            where not exists (select 1 from effects e where e.consumer = 'no-inbox' and e.message_id = id)`.execute(
            trx,
          );
        },
      },
      { inbox: false },
    );
    const once = deliveredEnvelope();
    await publishAll([once]);
    await waitFor('the first handling', async () => (await outcomes('no-inbox', 'ok')) === 1);
    await publishAll([once]);
    await waitFor('the redelivery', async () => (await outcomes('no-inbox', 'ok')) === 2);
    expect(seen).toEqual([once.id, once.id]);
    expect(await effects('no-inbox')).toEqual([once.id]);
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from inbox where consumer = 'svc.no-inbox'`.execute(fx.db);
    expect(rows[0]?.n).toBe(0);
  });

  it('dead-letters a poison message of a failed batch on its own while the other messages commit', async () => {
    const poison = deliveredEnvelope();
    const handled: string[] = [];
    const effectOf = async (id: string, trx: Transaction<TestDb>) => {
      if (id === poison.id) throw new PermanentError('this message can never be handled');
      await insertEffects('poison', trx, [id]);
    };
    let batchCalls = 0;
    const consumer = await startConsumer(
      'poison',
      async (message, trx) => {
        handled.push(message.id);
        await effectOf(message.id, trx);
      },
      {
        maxMessages: 5,
        maxWaitMs: 1_000,
        handle: async (items, trx) => {
          batchCalls++;
          for (const item of items) await effectOf(item.message.id, trx);
        },
      },
    );
    const good = Array.from({ length: 4 }, () => deliveredEnvelope());
    await publishAll([good[0]!, good[1]!, poison, good[2]!, good[3]!]);

    await waitFor('the dead letter', async () => (await queueDepth(broker, consumer.queues.dead)) === 1);
    await waitFor('the good messages', async () => (await outcomes('poison', 'ok')) === 4);
    expect(batchCalls).toBe(1);
    // After the batch rolled back, each message ran alone: the four good ones committed once each.
    expect(handled.sort()).toEqual([...good.map((e) => e.id), poison.id].sort());
    expect(await effects('poison')).toEqual(good.map((e) => e.id).sort());
    expect(await metricValue(metrics.registry, 'broker_batch_fallbacks_total', { consumer: 'svc.poison' })).toBe(1);
    const dead = await broker.withChannel((ch) => ch.get(consumer.queues.dead, { noAck: false }));
    expect(dead && dead.properties.messageId).toBe(poison.id);
    expect(dead && dead.properties.headers?.['x-dead-reason']).toBe('permanent');
    // Every message is settled (four committed, one dead): none was sent round again through a tier.
    expect(await metricValue(metrics.registry, 'broker_messages_retried_total', { consumer: 'svc.poison' })).toBe(0);
    for (const tier of consumer.queues.tiers) expect(await queueDepth(broker, tier.queue)).toBe(0);
    expect(await queueDepth(broker, consumer.queues.work)).toBe(0);
  });

  it('runs the after-commit work a batch handler returns once, after the commit', async () => {
    const seen: number[] = [];
    let runs = 0;
    await startConsumer('after', () => Promise.reject(new Error('unexpected')), {
      maxMessages: 3,
      maxWaitMs: 1_000,
      handle: async (items, trx) => {
        await insertEffects(
          'after',
          trx,
          items.map((i) => i.message.id),
        );
        return () => {
          runs++;
          void effects('after').then((ids) => seen.push(ids.length));
        };
      },
    });
    await publishAll(Array.from({ length: 3 }, () => deliveredEnvelope()));
    // After-commit work starts before the batch's outcomes are counted.
    await waitFor('the batch to settle', async () => (await outcomes('after', 'ok')) === 3);
    await waitFor('the after-commit work', () => seen.length > 0);
    expect(runs).toBe(1);
    expect(seen).toEqual([3]);
  });
});
