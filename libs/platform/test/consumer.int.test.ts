import { describe, expect, it, beforeAll, afterAll, jest } from '@jest/globals';
import { sql } from 'kysely';
import {
  createConsumer,
  createMetrics,
  PermanentError,
  queueDepth,
  redriveDeadLetters,
  RetryLaterError,
  type Broker,
  type Consumer,
  type ConsumerOptions,
  type Metrics,
} from '../src/index.ts';
import {
  createMessagingFixture,
  deliveredEnvelope,
  metricValue,
  sleep,
  waitFor,
  type MessagingFixture,
  type TestDb,
} from './messaging-fixture.ts';
import { startTcpProxy } from '@postline/testing';

// The integration project's testTimeout is not applied per project by jest 30.
jest.setTimeout(30_000);

let fx: MessagingFixture;
let broker: Broker;
let metrics: Metrics;
const consumers: Consumer[] = [];
const TIERS = { tiersMs: [100, 400], maxAttempts: 3 };

beforeAll(async () => {
  fx = await createMessagingFixture();
  metrics = createMetrics('consumer-test');
  broker = await fx.broker({ metrics });
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  await fx.close();
});

type Handle = ConsumerOptions<TestDb, 'email.delivered'>['handle'];

/** A consumer `svc.<name>` of `email.delivered` on the test database, through `broker` unless told otherwise. */
function deliveredConsumer<Prepared = undefined>(
  name: string,
  opts: Omit<
    ConsumerOptions<TestDb, 'email.delivered', Prepared>,
    'broker' | 'db' | 'service' | 'name' | 'bindings'
  > & { broker?: Broker },
): Consumer {
  return createConsumer<TestDb, 'email.delivered', Prepared>({
    db: fx.db,
    service: 'svc',
    name,
    bindings: [{ exchange: 'events', routingKey: 'email.delivered' }],
    ...opts,
    broker: opts.broker ?? broker,
  });
}

/** A consumer of `email.delivered` whose handler records one `effects` row per successful handling. */
async function startConsumer(name: string, handle: Handle, on: Broker = broker): Promise<Consumer> {
  return started(deliveredConsumer(name, { broker: on, prefetch: 4, retry: TIERS, handle }));
}

/** Starts a consumer whose queues are removed, and which is stopped, when the suite ends. */
async function started<C extends Consumer>(consumer: C): Promise<C> {
  for (const q of [consumer.queues.work, consumer.queues.dead, ...consumer.queues.tiers.map((t) => t.queue)])
    fx.queues.add(q);
  consumers.push(consumer);
  await consumer.start();
  return consumer;
}

function recordEffect(name: string): Handle {
  return async (message, trx) => {
    await trx.insertInto('effects').values({ consumer: name, message_id: message.id }).execute();
  };
}

async function publish(envelope: unknown, messageId: string): Promise<void> {
  const result = await broker.publish(
    broker.exchanges.events,
    'email.delivered',
    Buffer.from(JSON.stringify(envelope)),
    {
      messageId,
    },
  );
  expect(result).toEqual({ ok: true });
}

async function effects(name: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from effects where consumer = ${name}`.execute(
    fx.db,
  );
  return rows[0]?.n ?? 0;
}

function outcomes(name: string, outcome: string): Promise<number> {
  return metricValue(
    metrics.registry,
    'broker_message_handle_duration_seconds',
    { consumer: `svc.${name}`, outcome },
    'broker_message_handle_duration_seconds_count',
  );
}

describe('consumer', () => {
  it('handles a message published twice with the same id once', async () => {
    await startConsumer('twice', recordEffect('twice'));
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);
    await publish(envelope, envelope.id);

    await waitFor(
      'both deliveries to settle',
      async () => (await outcomes('twice', 'ok')) + (await outcomes('twice', 'duplicate')) === 2,
    );
    expect(await outcomes('twice', 'ok')).toBe(1);
    expect(await outcomes('twice', 'duplicate')).toBe(1);
    expect(await effects('twice')).toBe(1);
  });

  it('runs prepare before the transaction opens and hands its result to the handler', async () => {
    const seen: { prepared: string; inTransactionDuringPrepare: boolean }[] = [];
    let inTransaction = false;
    const consumer = deliveredConsumer<string>('prepared', {
      prepare: async (message) => {
        // The inbox row is written inside the transaction: none exists yet while prepare runs.
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from inbox
          where consumer = 'svc.prepared' and message_id = ${message.id}`.execute(fx.db);
        seen.push({ prepared: '', inTransactionDuringPrepare: inTransaction || (rows[0]?.n ?? 0) > 0 });
        return `looked up ${message.data.email_id}`;
      },
      handle: async (message, trx, prepared) => {
        inTransaction = true;
        seen[seen.length - 1]!.prepared = prepared;
        await recordEffect('prepared')(message, trx, undefined);
        inTransaction = false;
      },
    });
    await started(consumer);
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);

    await waitFor('the effect', async () => (await effects('prepared')) === 1);
    expect(seen).toEqual([
      { prepared: `looked up ${(envelope.data as { email_id: string }).email_id}`, inTransactionDuringPrepare: false },
    ]);
  });

  it('tells prepare whether a delivery is a redelivery, and hands discard the prepared results no handler sees', async () => {
    type Prepared = { id: string; redelivered: boolean; n: number };
    const handled: Prepared[] = [];
    const discarded: Prepared[] = [];
    let prepares = 0;
    let failOnce = true;
    const failing = deliveredEnvelope();
    const consumer = deliveredConsumer<Prepared>('discard', {
      retry: TIERS,
      prepare: (message, { redelivered }) => Promise.resolve({ id: message.id, redelivered, n: ++prepares }),
      discard: (prepared) => discarded.push(prepared),
      handle: async (message, trx, prepared) => {
        if (message.id === failing.id && failOnce) {
          failOnce = false;
          throw new Error('the transaction fails once');
        }
        handled.push(prepared);
        await recordEffect('discard')(message, trx, undefined);
      },
    });
    // Declared, then stopped: a message can be nacked back into its queue before anyone consumes it.
    await started(consumer);
    await consumer.stop();

    const requeued = deliveredEnvelope();
    await publish(requeued, requeued.id);
    await broker.withChannel(async (ch) => {
      for (;;) {
        const msg = await ch.get(consumer.queues.work, { noAck: false });
        if (msg) return ch.nack(msg, false, true);
        await sleep(20);
      }
    });
    await consumer.start();
    await waitFor('the requeued message', async () => (await effects('discard')) === 1);
    expect(handled).toEqual([{ id: requeued.id, redelivered: true, n: 1 }]);
    expect(discarded).toEqual([]);

    // A duplicate is prepared, then discarded.
    await publish(requeued, requeued.id);
    await waitFor('the duplicate', () => discarded.length === 1);
    expect(discarded[0]).toMatchObject({ id: requeued.id, redelivered: false });

    // A failed transaction discards its prepared result; the retry is prepared afresh.
    await publish(failing, failing.id);
    await waitFor('the retried message', async () => (await effects('discard')) === 2);
    expect(discarded.slice(1)).toEqual([expect.objectContaining({ id: failing.id })]);
    // Back from the retry tier: marked redelivered, since the first handling may have had effects.
    expect(handled.at(-1)).toMatchObject({ id: failing.id, redelivered: true });
    expect(handled.at(-1)!.n).toBeGreaterThan(discarded[1]!.n);
  });

  it('in batches, discards the prepared result of a duplicate and keeps the others through a failed batch handled one by one', async () => {
    type Prepared = { id: string; n: number };
    const discarded: Prepared[] = [];
    const handledOne: Prepared[] = [];
    let prepares = 0;
    let batchFails = true;
    const consumer = deliveredConsumer<Prepared>('discard-batch', {
      prefetch: 16,
      retry: TIERS,
      prepare: (message) => Promise.resolve({ id: message.id, n: ++prepares }),
      discard: (prepared) => discarded.push(prepared),
      handle: async (message, trx, prepared) => {
        handledOne.push(prepared);
        await recordEffect('discard-batch')(message, trx, undefined);
      },
      batch: {
        maxMessages: 8,
        maxWaitMs: 300,
        handle: async (items, trx) => {
          if (batchFails) {
            batchFails = false;
            throw new Error('the batch transaction fails once');
          }
          for (const { message } of items) await recordEffect('discard-batch')(message, trx, undefined);
        },
      },
    });
    await started(consumer);

    // One batch: a, a again (same id) and b. The copy of a arrives while a waits for its batch, so it shares
    // a's prepare. The batch fails; each is handled on its own: a and b with the results prepared for them,
    // and the copy of a is a duplicate whose shared result is left to the copy that prepared it.
    const shared = () =>
      metricValue(metrics.registry, 'broker_shared_prepares_total', { consumer: 'svc.discard-batch' });
    const a = deliveredEnvelope();
    const b = deliveredEnvelope();
    await publish(a, a.id);
    await publish(a, a.id);
    await publish(b, b.id);
    await waitFor('a and b', async () => (await effects('discard-batch')) === 2);
    await waitFor('both copies of a settled', async () => (await outcomes('discard-batch', 'duplicate')) === 1);
    expect(handledOne.map((p) => p.id).sort()).toEqual([a.id, b.id].sort());
    expect(prepares).toBe(2);
    expect(await shared()).toBe(1);
    expect(discarded).toEqual([]);

    // A copy that comes once the first has settled is prepared again; its batch commits and discards it.
    const c = deliveredEnvelope();
    await publish(c, c.id);
    await waitFor('c', async () => (await effects('discard-batch')) === 3);
    await waitFor('c settled', async () => (await outcomes('discard-batch', 'ok')) === 3);
    await publish(c, c.id);
    await waitFor('the duplicate discarded', () => discarded.length === 1);
    expect(discarded[0]!.id).toBe(c.id);
    expect(prepares).toBe(4);
  });

  it('shares the prepare still in flight with a redelivered copy after the connection dies: one effect, both settled', async () => {
    const target = new URL(fx.amqpUrl);
    const proxy = await startTcpProxy(Number(target.port || 5672), target.hostname);
    const viaProxy = await fx.broker({ url: proxy.url(fx.amqpUrl), metrics });

    let prepares = 0;
    let entered: () => void = () => undefined;
    const inPrepare = new Promise<void>((resolve) => (entered = resolve));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handled: number[] = [];
    await started(
      deliveredConsumer<number>('shared-prepare', {
        broker: viaProxy,
        prefetch: 4,
        retry: TIERS,
        // The effect that must not repeat (an SMTP transaction): slow, and still running when the channel dies.
        prepare: async () => {
          const n = ++prepares;
          entered();
          await gate;
          return n;
        },
        handle: async (message, trx, n) => {
          handled.push(n);
          await recordEffect('shared-prepare')(message, trx, undefined);
        },
      }),
    );
    const shared = () =>
      metricValue(metrics.registry, 'broker_shared_prepares_total', { consumer: 'svc.shared-prepare' });
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);
    await inPrepare;

    // The broker requeues the unacked delivery and hands it back once the consumer is connected again.
    await proxy.cut();
    await waitFor('the consumer connection to drop', () => !viaProxy.isConnected());
    await proxy.restore();
    await waitFor('the redelivered copy to join the prepare in flight', async () => (await shared()) === 1);
    release();

    await waitFor('the effect to commit', async () => (await effects('shared-prepare')) === 1);
    await waitFor(
      'the work queue to be empty',
      async () => (await queueDepth(broker, `${fx.prefix}.svc.shared-prepare`)) === 0,
    );
    expect(prepares).toBe(1);
    expect(handled).toEqual([1]);
    await proxy.close();
  });

  it('runs what the handler returns once its transaction has committed, and not for a duplicate', async () => {
    const seen: number[] = [];
    let runs = 0;
    await startConsumer('after-commit', async (message, trx) => {
      await recordEffect('after-commit')(message, trx, undefined);
      // Read from another connection: it sees the effect only once the transaction has committed.
      return () => {
        runs++;
        void effects('after-commit').then((n) => seen.push(n));
      };
    });
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);
    await publish(envelope, envelope.id);
    await waitFor(
      'both deliveries to settle',
      async () => (await outcomes('after-commit', 'ok')) + (await outcomes('after-commit', 'duplicate')) === 2,
    );
    // After-commit work starts before a delivery's outcome is counted: both have run whatever they would.
    await waitFor('the after-commit work', () => seen.length > 0);
    expect(runs).toBe(1);
    expect(seen).toEqual([1]);
  });

  it('has no second effect when the connection dies after the commit but before the ack', async () => {
    const target = new URL(fx.amqpUrl);
    const proxy = await startTcpProxy(Number(target.port || 5672), target.hostname);
    const viaProxy = await fx.broker({ url: proxy.url(fx.amqpUrl), metrics });

    let calls = 0;
    let entered: () => void = () => undefined;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await startConsumer(
      'redelivered',
      async (message, trx) => {
        calls++;
        entered();
        await gate;
        await recordEffect('redelivered')(message, trx, undefined);
      },
      viaProxy,
    );
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);
    await inHandler;

    await proxy.cut();
    await waitFor('the consumer connection to drop', () => !viaProxy.isConnected());
    release(); // commits; the ack has no channel left, so RabbitMQ requeues the delivery
    await waitFor('the effect to commit', async () => (await effects('redelivered')) === 1);
    await proxy.restore();

    await waitFor('the redelivery to be recognised', async () => (await outcomes('redelivered', 'duplicate')) === 1);
    expect(calls).toBe(1);
    expect(await effects('redelivered')).toBe(1);
    await waitFor(
      'the work queue to be empty',
      async () => (await queueDepth(broker, `${fx.prefix}.svc.redelivered`)) === 0,
    );
    await proxy.close();
  });

  it('has no second effect when a handled message comes back through nack and requeue', async () => {
    const first = await startConsumer('requeued', recordEffect('requeued'));
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);
    await waitFor('the first handling', async () => (await effects('requeued')) === 1);
    await first.stop();

    // The same message again, taken by another client and nacked back: it returns marked redelivered.
    await publish(envelope, envelope.id);
    const redelivered = await broker.withChannel(async (ch) => {
      const take = async () => {
        for (;;) {
          const msg = await ch.get(first.queues.work, { noAck: false });
          if (msg) return msg;
          await sleep(20);
        }
      };
      ch.nack(await take(), false, true);
      const again = await take();
      ch.nack(again, false, true);
      return again.fields.redelivered;
    });
    expect(redelivered).toBe(true);

    await startConsumer('requeued', recordEffect('requeued'));
    await waitFor('the redelivery to be recognised', async () => (await outcomes('requeued', 'duplicate')) === 1);
    expect(await effects('requeued')).toBe(1);
  });

  it('dead-letters an invalid message at once without calling the handler', async () => {
    let calls = 0;
    const consumer = await startConsumer('invalid', async () => {
      calls++;
      return Promise.resolve();
    });
    const envelope = { ...deliveredEnvelope(), data: { email_id: 'not-a-uuid' } };
    await publish(envelope, envelope.id);

    // The counter is the last thing dead-lettering does (after the broker confirmed the copy, which is when
    // the dead queue already holds it), so it is what the test waits on.
    const deadLettered = () =>
      metricValue(metrics.registry, 'broker_messages_dead_lettered_total', {
        consumer: 'svc.invalid',
        reason: 'invalid',
      });
    await waitFor('the dead letter counted', async () => (await deadLettered()) === 1);
    expect(calls).toBe(0);
    expect(await queueDepth(broker, consumer.queues.dead)).toBe(1);
    expect(await metricValue(metrics.registry, 'broker_messages_retried_total', { consumer: 'svc.invalid' })).toBe(0);
    expect(
      await metricValue(metrics.registry, 'broker_queue_messages', { queue: consumer.queues.dead, kind: 'dead' }),
    ).toBe(1);
    const dead = await broker.withChannel((ch) => ch.get(consumer.queues.dead, { noAck: false }));
    expect(dead && dead.properties.headers?.['x-dead-reason']).toBe('invalid');
    expect(dead && String(dead.properties.headers?.['x-dead-error'])).toMatch(/email_id/);
  });

  it('dead-letters a PermanentError at once', async () => {
    let calls = 0;
    const consumer = await startConsumer('permanent', () => {
      calls++;
      return Promise.reject(new PermanentError('the email is gone'));
    });
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);

    await waitFor('the dead letter', async () => (await queueDepth(broker, consumer.queues.dead)) === 1);
    // Dead-lettered, not retried: no tier holds it and none was counted, so nothing comes back.
    expect(calls).toBe(1);
    expect(await metricValue(metrics.registry, 'broker_messages_retried_total', { consumer: 'svc.permanent' })).toBe(0);
    for (const tier of consumer.queues.tiers) expect(await queueDepth(broker, tier.queue)).toBe(0);
    expect(await queueDepth(broker, consumer.queues.work)).toBe(0);
  });

  it('retries a handler that keeps throwing through the tiers, then dead-letters it; a redrive runs it again', async () => {
    const attempts: number[] = [];
    let failing = true;
    const consumer = await startConsumer('flaky', async (message, trx) => {
      attempts.push(Date.now());
      if (failing) throw new Error('smtp pool exhausted');
      await recordEffect('flaky')(message, trx, undefined);
    });
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);

    // Counted once the move to the dead queue returns: by then every retry before it was counted too.
    await waitFor(
      'the dead letter counted',
      async () =>
        (await metricValue(metrics.registry, 'broker_messages_dead_lettered_total', {
          consumer: 'svc.flaky',
          reason: 'exhausted',
        })) === 1,
    );
    expect(await queueDepth(broker, consumer.queues.dead)).toBe(1);
    expect(attempts).toHaveLength(TIERS.maxAttempts);
    // First retry waits in the 100 ms tier, the second in the 400 ms tier.
    expect((attempts[1] ?? 0) - (attempts[0] ?? 0)).toBeGreaterThanOrEqual(90);
    expect((attempts[2] ?? 0) - (attempts[1] ?? 0)).toBeGreaterThanOrEqual(380);
    expect(await metricValue(metrics.registry, 'broker_messages_retried_total', { consumer: 'svc.flaky' })).toBe(2);
    expect(await effects('flaky')).toBe(0);

    failing = false;
    expect(await redriveDeadLetters(broker, consumer.queues.work, 10)).toBe(1);
    await waitFor('the redriven message to be handled', async () => (await effects('flaky')) === 1);
    expect(attempts).toHaveLength(TIERS.maxAttempts + 1);
    expect(await queueDepth(broker, consumer.queues.dead)).toBe(0);
  });

  it('with recordRetriesMs, records a prepared result again instead of preparing it again when its transaction fails', async () => {
    let prepares = 0;
    let failures = 2;
    let poison = '';
    const consumer = await started(
      deliveredConsumer<number>('record-again', {
        retry: TIERS,
        recordRetriesMs: [50, 50, 50],
        // The effect that must not be repeated needlessly (an SMTP transaction that got its 250).
        prepare: () => Promise.resolve(++prepares),
        handle: async (message, trx) => {
          await recordEffect('record-again')(message, trx, undefined);
          // Fails after its write, as a lost connection would: nothing of a failed try may stay.
          if (failures-- > 0)
            throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
          if (message.data.email_id === poison) throw new Error('a bug in the handler, not an outage');
        },
      }),
    );
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);

    await waitFor('the record', async () => (await effects('record-again')) === 1);
    expect(prepares).toBe(1);
    expect(await metricValue(metrics.registry, 'broker_record_retries_total', { consumer: 'svc.record-again' })).toBe(
      2,
    );
    expect(await metricValue(metrics.registry, 'broker_messages_retried_total', { consumer: 'svc.record-again' })).toBe(
      0,
    );
    expect(await queueDepth(broker, consumer.queues.work)).toBe(0);

    // Past its record retries a message goes to a retry tier as before, and is prepared again there.
    failures = 4;
    const next = deliveredEnvelope();
    await publish(next, next.id);
    await waitFor('the record after a retry tier', async () => (await effects('record-again')) === 2);
    expect(prepares).toBe(3);
    expect(await metricValue(metrics.registry, 'broker_messages_retried_total', { consumer: 'svc.record-again' })).toBe(
      1,
    );

    // Any other failure is not recorded again: straight to a retry tier, as without the option.
    const failing = deliveredEnvelope();
    poison = (failing.data as { email_id: string }).email_id;
    await publish(failing, failing.id);
    await waitFor(
      'the retry tier',
      async () =>
        (await metricValue(metrics.registry, 'broker_messages_retried_total', { consumer: 'svc.record-again' })) === 2,
    );
    expect(await metricValue(metrics.registry, 'broker_record_retries_total', { consumer: 'svc.record-again' })).toBe(
      5,
    );
  });

  it('with recordRetriesMs and batches, records a batch again as a whole while the database is unavailable', async () => {
    let prepares = 0;
    let failures = 1;
    await started(
      deliveredConsumer<number>('batch-again', {
        prefetch: 8,
        retry: TIERS,
        recordRetriesMs: [50, 50],
        prepare: () => Promise.resolve(++prepares),
        handle: (message, trx) => recordEffect('batch-again')(message, trx, undefined),
        batch: {
          maxMessages: 8,
          maxWaitMs: 100,
          handle: async (items, trx) => {
            for (const { message } of items) await recordEffect('batch-again')(message, trx, undefined);
            if (failures-- > 0) throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
          },
        },
      }),
    );
    const envelopes = [deliveredEnvelope(), deliveredEnvelope(), deliveredEnvelope()];
    await Promise.all(envelopes.map((e) => publish(e, e.id)));

    await waitFor('the records', async () => (await effects('batch-again')) === 3);
    expect(prepares).toBe(3);
    expect(await metricValue(metrics.registry, 'broker_batch_fallbacks_total', { consumer: 'svc.batch-again' })).toBe(
      0,
    );
    expect(
      await metricValue(metrics.registry, 'broker_record_retries_total', { consumer: 'svc.batch-again' }),
    ).toBeGreaterThan(0);
  });

  it('waits for the delay tier a RetryLaterError asks for', async () => {
    const attempts: number[] = [];
    await startConsumer('later', async (message, trx) => {
      attempts.push(Date.now());
      if (attempts.length === 1) throw new RetryLaterError(250);
      await recordEffect('later')(message, trx, undefined);
    });
    const envelope = deliveredEnvelope();
    await publish(envelope, envelope.id);

    await waitFor('the retried handling', async () => (await effects('later')) === 1);
    // 250 ms rounds up to the 400 ms tier, not the 100 ms one a plain error would get first.
    expect((attempts[1] ?? 0) - (attempts[0] ?? 0)).toBeGreaterThanOrEqual(380);
  });
});
