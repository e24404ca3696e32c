import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql } from 'kysely';
import { createLogger, newId, queueDepth } from '@postline/platform';
import { SCHEMA } from '../src/config.ts';
import { pruneTombstones, setTimer, timerDueChannel } from '../src/db/timers.ts';
import { listenForTimerDue } from '../src/jobs/timer-due-listener.ts';
import { TOMBSTONE_RETENTION_MS } from '../src/jobs/timer-firing.ts';
import {
  createSchedulerFixture,
  deliveredEnvelope,
  inMs,
  sample,
  waitFor,
  type SchedulerFixture,
  type SchedulerProcess,
} from './harness.ts';

jest.setTimeout(30_000);

let fx: SchedulerFixture;
let scheduler: SchedulerProcess;

beforeAll(async () => {
  fx = await createSchedulerFixture();
  scheduler = await fx.start();
});

afterAll(async () => {
  await fx?.close();
});

const receivedIds = () => fx.received.map((r) => r.envelope.id);
const receivedOf = (id: string) => fx.received.filter((r) => r.envelope.id === id);

async function waitReceived(id: string, timeoutMs = 10_000) {
  await waitFor(`message ${id}`, () => receivedOf(id).length > 0, timeoutMs);
  return receivedOf(id)[0]!;
}

async function timerRow(key: string) {
  return fx.db.selectFrom('timers').selectAll().where('key', '=', key).executeTakeFirst();
}

async function inOutbox(id: string): Promise<boolean> {
  return (await fx.db.selectFrom('outbox').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/**
 * A timer due after `dueAt`, waited for: timers fire in due order, so once it is received anything due
 * earlier has been fired (committed to the outbox) or never will be.
 */
async function sentinelAfter(dueAt: string): Promise<void> {
  const message = deliveredEnvelope();
  await fx.set({ key: `sentinel-${newId()}`, due_at: new Date(Date.parse(dueAt) + 200).toISOString(), message });
  await waitReceived(message.id);
}

describe('timers', () => {
  it('publishes the stored envelope under its routing key at its due time, not before', async () => {
    const message = deliveredEnvelope();
    const dueAt = inMs(1_500);
    const { id } = await fx.set({ key: 'fires-on-time', due_at: dueAt, message });
    await fx.handled(id);
    expect(await timerRow('fires-on-time')).toMatchObject({ state: 'pending', routing_key: 'email.delivered' });

    const got = await waitReceived(message.id);
    expect(got.at).toBeGreaterThanOrEqual(Date.parse(dueAt));
    expect(got.routingKey).toBe('email.delivered');
    expect(got.messageId).toBe(message.id);
    expect(got.envelope).toEqual(message);
    expect(await timerRow('fires-on-time')).toMatchObject({ state: 'fired', message: null, command_id: id });
  });

  it('fires a timer whose due_at is already past at once', async () => {
    const message = deliveredEnvelope();
    await fx.set({ key: 'past-due', due_at: inMs(-3_600_000), message });
    const got = await waitReceived(message.id);
    expect(got.envelope.id).toBe(message.id);
  });

  it('moves a rescheduled timer: it fires once, at the new time, not the old one', async () => {
    const message = deliveredEnvelope();
    const first = await fx.set({ key: 'reschedule', due_at: inMs(800), message });
    const newDue = inMs(2_500);
    const second = await fx.set({ key: 'reschedule', due_at: newDue, message });
    await fx.handled(first.id);
    await fx.handled(second.id);

    const got = await waitReceived(message.id);
    expect(got.at).toBeGreaterThanOrEqual(Date.parse(newDue));
    await sentinelAfter(newDue);
    expect(receivedOf(message.id)).toHaveLength(1);
  });

  it('moves a timer earlier and fires it at the new time', async () => {
    const message = deliveredEnvelope();
    await fx.set({ key: 'bring-forward', due_at: inMs(3_600_000), message });
    await fx.set({ key: 'bring-forward', due_at: inMs(300), message });
    await waitReceived(message.id);
    expect(await timerRow('bring-forward')).toMatchObject({ state: 'fired' });
  });

  it('never fires a cancelled timer', async () => {
    const message = deliveredEnvelope();
    const dueAt = inMs(800);
    await fx.set({ key: 'cancelled', due_at: dueAt, message });
    const { id } = await fx.cancel('cancelled');
    await fx.handled(id);
    expect(await timerRow('cancelled')).toMatchObject({ state: 'cancelled', message: null, command_id: id });

    await sentinelAfter(dueAt);
    expect(receivedIds()).not.toContain(message.id);
    expect(await inOutbox(message.id)).toBe(false);
  });

  it('re-arms a fired key when a newer set arrives (a re-check timer reusing its key)', async () => {
    const first = deliveredEnvelope();
    await fx.set({ key: 're-arm', due_at: inMs(0), message: first });
    await waitReceived(first.id);
    const second = deliveredEnvelope();
    await fx.set({ key: 're-arm', due_at: inMs(200), message: second });
    await waitReceived(second.id);
    expect(receivedOf(first.id)).toHaveLength(1);
  });

  describe('an older command arriving after a newer one is ignored', () => {
    it('an older set after a cancel does not resurrect the timer', async () => {
      const olderSet = newId();
      const newerCancel = newId();
      const message = deliveredEnvelope();
      const dueAt = inMs(500);
      await fx.cancel('late-set', newerCancel);
      await fx.handled(newerCancel);
      await fx.set({ key: 'late-set', due_at: dueAt, message }, olderSet);
      await fx.handled(olderSet);
      expect(await timerRow('late-set')).toMatchObject({ state: 'cancelled', command_id: newerCancel });

      await sentinelAfter(dueAt);
      expect(receivedIds()).not.toContain(message.id);
      expect(await inOutbox(message.id)).toBe(false);
    });

    it('an older cancel after a set does not cancel it', async () => {
      const olderCancel = newId();
      const newerSet = newId();
      const message = deliveredEnvelope();
      await fx.set({ key: 'late-cancel', due_at: inMs(500), message }, newerSet);
      await fx.handled(newerSet);
      await fx.cancel('late-cancel', olderCancel);
      await fx.handled(olderCancel);
      await waitReceived(message.id);
    });

    it('an older set after a newer set neither replaces it nor fires', async () => {
      const olderId = newId();
      const newerId = newId();
      const older = deliveredEnvelope();
      const newer = deliveredEnvelope();
      const newerDue = inMs(1_000);
      await fx.set({ key: 'late-older-set', due_at: newerDue, message: newer }, newerId);
      await fx.handled(newerId);
      await fx.set({ key: 'late-older-set', due_at: inMs(200), message: older }, olderId);
      await fx.handled(olderId);

      const got = await waitReceived(newer.id);
      expect(got.at).toBeGreaterThanOrEqual(Date.parse(newerDue));
      await sentinelAfter(newerDue);
      expect(receivedIds()).not.toContain(older.id);
    });

    it('an older set after the timer fired does not fire it again', async () => {
      const olderId = newId();
      const newerId = newId();
      const message = deliveredEnvelope();
      const dueAt = inMs(0);
      await fx.set({ key: 'late-after-fire', due_at: dueAt, message }, newerId);
      await waitReceived(message.id);
      await fx.set({ key: 'late-after-fire', due_at: dueAt, message: deliveredEnvelope() }, olderId);
      await fx.handled(olderId);
      expect(await timerRow('late-after-fire')).toMatchObject({ state: 'fired', command_id: newerId });
    });
  });

  it('dead-letters an invalid timer and stores nothing', async () => {
    const good = deliveredEnvelope();
    const commands = [
      await fx.set({
        key: 'bad-routing-key',
        due_at: inMs(0),
        routing_key: 'email.nope',
        message: { ...good, type: 'email.nope' },
      }),
      await fx.set({ key: 'bad-type', due_at: inMs(0), routing_key: 'email.bounced', message: good }),
      await fx.set({ key: 'bad-data', due_at: inMs(0), message: { ...good, data: { subject: 1 } } }),
      await fx.set({ key: 'bad-command-id', due_at: inMs(0), message: good }, '8d3e4f4a-6f1c-4b7e-9a55-3f0c2b1d7e11'),
    ];
    await waitFor('4 dead letters', async () => (await queueDepth(fx.broker, fx.queues.dead)) === 4);
    const rows = await fx.db
      .selectFrom('timers')
      .select('key')
      .where('key', 'in', ['bad-routing-key', 'bad-type', 'bad-data', 'bad-command-id'])
      .execute();
    expect(rows).toEqual([]);
    const handled = await fx.db
      .selectFrom('inbox')
      .select('message_id')
      .where(
        'message_id',
        'in',
        commands.map((c) => c.id),
      )
      .execute();
    expect(handled).toEqual([]);
    expect(receivedIds()).not.toContain(good.id);
    const metrics = await scheduler.metrics();
    expect(sample(metrics, 'scheduler_timer_commands_total', { command: 'set', outcome: 'invalid' })).toBe(4);
  });

  it('exposes pending timers, fired timers and the due-to-fired lag on /metrics', async () => {
    const before = await scheduler.metrics();
    const olderId = newId();
    for (const key of ['far-1', 'far-2']) {
      const { id } = await fx.set({ key, due_at: inMs(3_600_000) });
      await fx.handled(id);
    }
    const stale = await fx.set({ key: 'far-1', due_at: inMs(0) }, olderId);
    await fx.handled(stale.id);
    const pending = await fx.db
      .selectFrom('timers')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow();
    const message = deliveredEnvelope();
    await fx.set({ key: 'metered', due_at: inMs(0), message });
    await waitReceived(message.id);
    // The firing is counted just after its commit, so possibly after the outbox published it.
    const firedTotal = (text: string) => sample(text, 'scheduler_timers_fired_total');
    await waitFor('the firing counted', async () => firedTotal(await scheduler.metrics()) === firedTotal(before) + 1);

    const after = await scheduler.metrics();
    expect(sample(after, 'scheduler_timers_pending')).toBe(Number(pending.n));
    expect(sample(after, 'scheduler_timers_pending')).toBeGreaterThanOrEqual(2);
    expect(sample(after, 'scheduler_timers_fired_total')).toBe(sample(before, 'scheduler_timers_fired_total') + 1);
    const lagCount = (text: string) => sample(text, 'scheduler_timer_lag_seconds_count');
    expect(lagCount(after)).toBe(lagCount(before) + 1);
    // Buckets fine enough around 0-2 s to tell a healthy scheduler from one a poll or a second behind.
    for (const le of ['0.05', '0.1', '0.25', '0.5', '1', '2']) {
      expect(after).toContain(`scheduler_timer_lag_seconds_bucket{le="${le}"`);
    }
    const commands = (text: string, outcome: string) =>
      sample(text, 'scheduler_timer_commands_total', { command: 'set', outcome });
    expect(commands(after, 'applied')).toBe(commands(before, 'applied') + 3);
    expect(commands(after, 'stale')).toBe(commands(before, 'stale') + 1);
  });
});

describe('tombstones', () => {
  it('prunes fired and cancelled keys past the retention, never pending timers or recent tombstones', async () => {
    const keys = ['tomb-old', 'tomb-recent', 'tomb-pending'];
    for (const key of ['tomb-old', 'tomb-recent']) await fx.handled((await fx.cancel(key)).id);
    await fx.handled((await fx.set({ key: 'tomb-pending', due_at: inMs(3_600_000) })).id);
    const backdated = new Date(Date.now() - TOMBSTONE_RETENTION_MS - 60_000);
    await fx.db
      .updateTable('timers')
      .set({ updated_at: backdated })
      .where('key', 'in', ['tomb-old', 'tomb-pending'])
      .execute();

    expect(await pruneTombstones(fx.db, TOMBSTONE_RETENTION_MS, 1_000)).toBeGreaterThanOrEqual(1);
    const left = await fx.db.selectFrom('timers').select('key').where('key', 'in', keys).orderBy('key').execute();
    expect(left.map((r) => r.key)).toEqual(['tomb-pending', 'tomb-recent']);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from timers
      where state <> 'pending' and updated_at < now() - interval '7 days'`.execute(fx.db);
    expect(rows[0]?.n).toBe(0);
  });
});

describe('wake-up notification', () => {
  it('a set due within the poll interval wakes the listeners at commit, a later one does not', async () => {
    // What the listener heard, in order: undefined when it (re)connected, a notification's payload otherwise.
    const heard: (string | undefined)[] = [];
    const listener = listenForTimerDue({
      databaseUrl: fx.database.url,
      schema: SCHEMA,
      logger: createLogger({ service: 'scheduler-test', level: 'silent' }),
      onDue: (payload?: string) => heard.push(payload),
    });
    const wakes = () => heard.filter((payload) => !payload?.startsWith('marker-')).length;
    /**
     * Notifies the channel from another session and waits until the listener hears it: a notification
     * sent before the marker would have arrived before it.
     */
    const passMarker = async () => {
      const marker = `marker-${newId()}`;
      await sql`select pg_notify(${timerDueChannel(SCHEMA)}, ${marker})`.execute(fx.db);
      await waitFor(`the listener to hear ${marker}`, () => heard.includes(marker));
    };
    try {
      await waitFor('the listener to connect', () => wakes() === 1);
      const timer = (dueAt: string) => ({
        key: `wake-${newId()}`,
        dueAt: new Date(dueAt),
        routingKey: 'email.delivered' as const,
        message: deliveredEnvelope(),
        commandId: newId(),
      });
      await fx.db.transaction().execute(async (trx) => {
        await setTimer(trx, timer(inMs(3_600_000)), 250);
        await setTimer(trx, timer(inMs(100)), 250);
        await passMarker();
        // Not before the commit: a firing pass woken now could not see the row yet.
        expect(wakes()).toBe(1);
      });
      await waitFor('the wake-up', () => wakes() === 2);
      await fx.db.transaction().execute(async (trx) => {
        await setTimer(trx, timer(inMs(3_600_000)), 250);
      });
      await passMarker();
      expect(wakes()).toBe(2);
    } finally {
      await listener.stop();
    }
  });
});
