// The traffic shaping snapshots on a real Postgres: two processes write their providers' state, the view
// puts them together, an unchanged row is not written again until its refresh is due, a process that
// stops takes its rows with it, and one that died (its rows no longer refreshed) leaves the view. What is
// stored names no recipient and no other MX domain, and only a named provider's pushback or hold is
// written at once.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createDb, type Logger } from '@postline/platform';
import { createTestDatabase, type TestDatabase } from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import type { SenderDb } from '../src/db/schema.ts';
import { pruneStaleShapingRows } from '../src/deliverability/db/provider-shaping.ts';
import { createShapingSnapshots } from '../src/deliverability/jobs/shaping-snapshots.ts';
import { readProviderShaping } from '../src/deliverability/use-cases/read-providers.ts';
import type { ProviderState } from '../src/delivery/index.ts';

let database: TestDatabase;
let db: Kysely<SenderDb>;
const silent = { warn: () => undefined } as unknown as Logger;
const REPLY = '421 4.7.28 Our system has detected an unusual rate of unsolicited mail';

beforeAll(async () => {
  database = await createTestDatabase('shaping');
  db = createDb<SenderDb>({ url: database.url, schema: SCHEMA }).db;
  await migrate(db);
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

function gmail(over: Partial<ProviderState> = {}): ProviderState {
  return {
    key: 'gmail',
    provider: 'gmail',
    rate: 3000,
    limit: 3000,
    connections: 2,
    maxConnections: 20,
    maxMessagesPerConnection: 100,
    deferrals: 0,
    heldUntil: null,
    reason: null,
    ...over,
  };
}

/** A process's writer over states the test sets; its interval never comes round during a test. */
function processWith(replica: string, initial: ProviderState[], sendingIp: string | null = null) {
  const current = { states: initial };
  const snapshots = createShapingSnapshots({
    db,
    logger: silent,
    states: () => current.states,
    sendingIp: () => sendingIp,
    replica,
    everyMs: 3_600_000,
  });
  snapshots.part.start();
  return { current, snapshots };
}

const updatedAt = async (replica: string) =>
  (
    await db
      .selectFrom('provider_shaping')
      .select('updated_at')
      .where('replica', '=', replica)
      .executeTakeFirstOrThrow()
  ).updated_at;

describe('traffic shaping snapshots', () => {
  it('shows the processes together, writes what changed, and forgets a process that stops', async () => {
    const heldUntil = new Date(Date.now() + 300_000);
    const a = processWith('a (pid 1)', [gmail()], '10.0.0.1');
    const b = processWith('b (pid 2)', [gmail({ rate: 750, heldUntil, reason: REPLY })]);
    await Promise.all([a.snapshots.write(), b.snapshots.write()]);

    const [provider, ...others] = (await readProviderShaping(db)).providers;
    expect(others).toEqual([]);
    expect(provider).toMatchObject({
      provider: 'gmail',
      state: 'held',
      reason: REPLY,
      heldUntil,
      ratePerMinute: 3750,
      limitPerMinute: 6000,
      connections: 4,
    });
    expect(provider?.replicas.map((r) => [r.replica, r.state, r.sendingIp])).toEqual([
      ['b (pid 2)', 'held', null],
      ['a (pid 1)', 'normal', '10.0.0.1'],
    ]);
    expect(new Set(provider?.replicas.map((r) => r.processId)).size).toBe(2);

    // Unchanged: not written again (its refresh is 10 s away); changed: written.
    const before = await updatedAt('a (pid 1)');
    await a.snapshots.write();
    expect(await updatedAt('a (pid 1)')).toEqual(before);
    a.current.states = [gmail({ connections: 3 })];
    await a.snapshots.write();
    expect((await updatedAt('a (pid 1)')).getTime()).toBeGreaterThan(before.getTime());

    await b.snapshots.part.stop();
    expect((await readProviderShaping(db)).providers[0]).toMatchObject({
      state: 'normal',
      reason: null,
      connections: 3,
    });
    // Stopped: writes no more.
    await b.snapshots.write();
    expect((await readProviderShaping(db)).providers[0]?.replicas).toHaveLength(1);
    await a.snapshots.part.stop();
    expect((await readProviderShaping(db)).providers).toEqual([]);
  });

  it('leaves out the rows of a process no longer refreshing them, and prunes them later', async () => {
    const killed = processWith('killed (pid 3)', [gmail({ key: 'microsoft', provider: 'microsoft' })]);
    await killed.snapshots.write();
    expect((await readProviderShaping(db)).providers.map((p) => p.provider)).toEqual(['microsoft']);
    await sql`update provider_shaping set updated_at = now() - interval '31 seconds'`.execute(db);
    expect((await readProviderShaping(db)).providers).toEqual([]);
    await pruneStaleShapingRows(db, 30_000);
    expect(await db.selectFrom('provider_shaping').selectAll().execute()).toEqual([]);
    await killed.snapshots.part.stop();
  });

  it('stores no address of a reply and no other MX domain: other mail servers are counted', async () => {
    const heldUntil = new Date(Date.now() + 600_000);
    const p = processWith('c (pid 4)', [
      gmail({ rate: 1500, reason: '450 4.7.1 <bob@acme.com>: Recipient address rejected: Greylisted' }),
      gmail({
        key: 'other:acme-legal.com',
        provider: 'other',
        rate: 300_000,
        limit: 600_000,
        reason: '10 deferrals in a row, the last: 452 4.2.2 <x@acme-legal.com> mailbox full',
      }),
      gmail({ key: 'other:teamb.example', provider: 'other', rate: 30_000, limit: 600_000, heldUntil, reason: REPLY }),
    ]);
    await p.snapshots.write();
    const stored = await db
      .selectFrom('provider_shaping')
      .selectAll()
      .where('replica', '=', 'c (pid 4)')
      .orderBy('key')
      .execute();
    expect(stored.map((r) => [r.key, r.reason, r.servers_slowed, r.servers_held])).toEqual([
      ['gmail', '450 4.7.1 <…>: Recipient address rejected: Greylisted', null, null],
      ['other', '421 4.7.28', 1, 1],
    ]);
    expect(JSON.stringify(stored)).not.toMatch(/acme|teamb|bob/);
    expect((await readProviderShaping(db)).otherServers).toEqual({
      slowed: 1,
      held: 1,
      firstHeldUntil: heldUntil,
      lastHeldUntil: heldUntil,
      reason: '421 4.7.28',
    });
    await p.snapshots.part.stop();
  });

  it("writes at once a named provider's hold, and another MX domain's pushback on the next turn", async () => {
    const p = processWith('d (pid 5)', []);
    const rows = () => db.selectFrom('provider_shaping').select('key').where('replica', '=', 'd (pid 5)').execute();
    p.current.states = [
      gmail({ key: 'other:acme-legal.com', provider: 'other', rate: 300_000, limit: 600_000, reason: REPLY }),
    ];
    await p.snapshots.changed('other:acme-legal.com', 'pushback');
    await p.snapshots.changed('other:acme-legal.com', 'held');
    expect(await rows()).toEqual([]);
    p.current.states.push(gmail({ rate: 750, heldUntil: new Date(Date.now() + 60_000), reason: REPLY }));
    await p.snapshots.changed('gmail', 'held');
    expect((await rows()).map((r) => r.key).sort()).toEqual(['gmail', 'other']);
    await p.snapshots.part.stop();
  });
});
