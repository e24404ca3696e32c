import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql } from 'kysely';
import { createSchedulerFixture, deliveredEnvelope, inMs, sample, waitFor, type SchedulerFixture } from './harness.ts';

// Each test starts scheduler processes of its own: on a machine busy with the rest of the suite that takes a while.
jest.setTimeout(180_000);

let fx: SchedulerFixture;

beforeAll(async () => {
  fx = await createSchedulerFixture();
});

afterAll(async () => {
  await fx?.close();
});

async function pendingCount(): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from timers where state = 'pending'`.execute(
    fx.db,
  );
  return rows[0]?.n ?? 0;
}

/** Pending timers already due on the database clock, the one the firing loop goes by. */
async function duePendingCount(): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from timers
    where state = 'pending' and due_at <= now()`.execute(fx.db);
  return rows[0]?.n ?? 0;
}

async function unpublishedCount(): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from outbox where published_at is null`.execute(
    fx.db,
  );
  return rows[0]?.n ?? 0;
}

describe('replicas and restarts', () => {
  it('two replicas on one database fire each of 3,000 timers due at the same instant exactly once', async () => {
    const replicas = [await fx.start(), await fx.start()];
    const N = 3_000;
    const dueAt = inMs(4_000);
    const ids = new Set<string>();
    const commands: Promise<{ id: string }>[] = [];
    for (let i = 0; i < N; i++) {
      const message = deliveredEnvelope();
      ids.add(message.id);
      commands.push(fx.set({ key: `replica-${i}`, due_at: dueAt, message }));
    }
    await Promise.all(commands);

    const mine = () => fx.received.filter((r) => ids.has(r.envelope.id));
    // Generous waits: they bound liveness only, and a saturated CI machine has taken over 40 s for the 3,000.
    await waitFor(`${N} timers received`, () => new Set(mine().map((r) => r.envelope.id)).size === N, 150_000);
    await waitFor(
      'the outbox to drain',
      async () => (await pendingCount()) === 0 && (await unpublishedCount()) === 0,
      60_000,
    );
    // Everything published is queued ahead of the marker, so a duplicate publish, if any, has landed.
    await fx.passMarker();
    expect(mine()).toHaveLength(N);

    // Each replica counts what it committed, just after the commit (so after the outbox may have published
    // it): wait for the counts themselves. A timer claimed by both would be counted twice.
    const firedTotal = async () =>
      (await Promise.all(replicas.map((replica) => replica.metrics())))
        .map((text) => sample(text, 'scheduler_timers_fired_total'))
        .reduce((a, b) => a + b);
    await waitFor(`${N} firings counted`, async () => (await firedTotal()) >= N, 60_000);
    const texts = await Promise.all(replicas.map((replica) => replica.metrics()));
    const fired = texts.map((text) => sample(text, 'scheduler_timers_fired_total'));
    expect(fired[0]! + fired[1]!).toBe(N);
    expect(texts.map((text) => sample(text, 'scheduler_timer_lag_seconds_count')).reduce((a, b) => a + b)).toBe(N);
    const { rows } = await sql<{ state: string; n: number }>`select state, count(*)::int as n from timers
      where key like 'replica-%' group by state`.execute(fx.db);
    expect(rows).toEqual([{ state: 'fired', n: N }]);

    expect(await Promise.all(replicas.map((r) => r.stop()))).toEqual([0, 0]);
  }, 300_000);

  it('fires the timers that came due while the scheduler was down once it is back', async () => {
    const first = await fx.start();
    const dueAt = inMs(1_500);
    const stored = Array.from({ length: 5 }, () => deliveredEnvelope());
    for (const [i, message] of stored.entries()) {
      const { id } = await fx.set({ key: `restart-${i}`, due_at: dueAt, message });
      await fx.handled(id);
    }
    expect(await first.stop()).toBe(0);

    // Sent while no scheduler runs: waits in the command queue.
    const queued = deliveredEnvelope();
    await fx.set({ key: 'restart-queued', due_at: inMs(500), message: queued });
    await waitFor('the stored timers to come due', async () => (await duePendingCount()) === stored.length);
    const all = [...stored, queued].map((m) => m.id);
    expect(fx.received.filter((r) => all.includes(r.envelope.id))).toEqual([]);
    expect(await pendingCount()).toBe(5);

    const second = await fx.start();
    await waitFor('the overdue timers', () => all.every((id) => fx.received.some((r) => r.envelope.id === id)));
    expect(fx.received.filter((r) => all.includes(r.envelope.id))).toHaveLength(all.length);
    const fired = async () => sample(await second.metrics(), 'scheduler_timers_fired_total');
    await waitFor('the overdue firings counted', async () => (await fired()) >= all.length);
    expect(await fired()).toBe(all.length);
  });
});
