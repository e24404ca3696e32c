// The reputation guard's window and pauses on a real Postgres: the window holds the last sends (older
// buckets leave it), a domain is paused on its own only while its team is not, a resume forgets the outcomes
// recorded before it, and a delivery parked after its pause was lifted is sent again rather than kept. A
// team's own lines (set by the operator) judge it in place of the install's, and a window whose team's
// window changed keeps what it holds.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createDb, newId, type Logger } from '@postline/platform';
import { createTestDatabase, type TestDatabase } from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import type { SenderDb } from '../src/db/schema.ts';
import { addReputationDeltas, saveTeamThresholds, type ReputationDelta } from '../src/reputation/db/reputation.ts';
import type { ReputationThresholds } from '../src/reputation/domain/reputation.ts';
import { foldReputation } from '../src/reputation/use-cases/reputation-guard.ts';
import { parkDeliveries, readReputation, resumeSending } from '../src/reputation/use-cases/reputation.ts';

let database: TestDatabase;
let db: Kysely<SenderDb>;
const thresholds: ReputationThresholds = { bounceRate: 0.04, complaintRate: 0.0008, window: 20, minSends: 10 };
const silent = { warn: () => undefined } as unknown as Logger;
const guard = () => ({ db, thresholds, now: () => new Date(), logger: silent });

beforeAll(async () => {
  database = await createTestDatabase('reputation');
  db = createDb<SenderDb>({ url: database.url, schema: SCHEMA }).db;
  await migrate(db);
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

async function record(delta: ReputationDelta, at = new Date()): Promise<void> {
  await db.transaction().execute((trx) => addReputationDeltas(trx, [delta], at));
  await foldReputation(guard());
}

async function outboxTypes(teamId: string): Promise<string[]> {
  const { rows } = await sql<{ routing_key: string }>`select routing_key from outbox
    where envelope->>'team_id' = ${teamId} order by id`.execute(db);
  return rows.map((r) => r.routing_key);
}

describe('the reputation window', () => {
  it('holds the last sends: bounces leave it as clean sends follow, and the pause stays until a resume', async () => {
    const teamId = newId();
    const domainId = newId();
    await record({ teamId, domainId, sends: 8, bounces: 1, complaints: 0 });
    // Then forty clean sends in batches of two: the window (twenty sends) no longer holds the bounce.
    for (let i = 0; i < 20; i++) await record({ teamId, domainId, sends: 2, bounces: 0, complaints: 0 });
    const view = await readReputation({ db, thresholds, now: () => new Date() }, teamId);
    expect(view.team.bounces).toBe(0);
    expect(view.team.sends).toBeGreaterThanOrEqual(18);
    expect(view.team.sends).toBeLessThanOrEqual(20);
    // One bounce in the first ten sends was over the line: the pause stays, clean window or not.
    expect(view.team.pause).toMatchObject({ reason: 'bounce_rate', sends: 10, bounceRate: 0.1 });
  });

  it('pauses the team, not also its domain, and a resume forgets the outcomes before it', async () => {
    const teamId = newId();
    const domainId = newId();
    await record({ teamId, domainId, sends: 10, bounces: 5, complaints: 0 });
    let view = await readReputation({ db, thresholds, now: () => new Date() }, teamId);
    expect(view.team.pause).toMatchObject({ reason: 'bounce_rate', sends: 10, bounceRate: 0.5, line: 0.04 });
    expect((await db.selectFrom('reputation_pauses').selectAll().where('team_id', '=', teamId).execute()).length).toBe(
      1,
    );
    expect(await outboxTypes(teamId)).toEqual(['internal.reputation.paused']);

    // A bounce recorded before the resume but folded after it is forgotten with the rest.
    const before = new Date();
    await db
      .transaction()
      .execute((trx) =>
        addReputationDeltas(trx, [{ teamId, domainId, sends: 10, bounces: 10, complaints: 0 }], before),
      );
    view = await resumeSending(
      { db, thresholds, now: () => new Date(before.getTime() + 1) },
      teamId,
      undefined,
      undefined,
    );
    expect(view.team.pause).toBeUndefined();
    await foldReputation(guard());
    view = await readReputation({ db, thresholds, now: () => new Date() }, teamId);
    expect(view.team.sends).toBe(0);
    expect(await outboxTypes(teamId)).toEqual(['internal.reputation.paused', 'internal.reputation.resumed']);
  });

  it('pauses a domain on its own while its team is under the line', async () => {
    const teamId = newId();
    const bad = newId();
    const good = newId();
    // In one fold: the team's two hundred sends hold two bounces (1%), the bad domain's ten (20%).
    await db.transaction().execute((trx) =>
      addReputationDeltas(
        trx,
        [
          { teamId, domainId: good, sends: 190, bounces: 0, complaints: 0 },
          { teamId, domainId: bad, sends: 10, bounces: 2, complaints: 0 },
        ],
        new Date(),
      ),
    );
    await foldReputation(guard());
    const pauses = await db.selectFrom('reputation_pauses').selectAll().where('team_id', '=', teamId).execute();
    expect(pauses.map((p) => [p.domain_id, p.reason])).toEqual([[bad, 'bounce_rate']]);
    // Another team's resume of that domain id is a 404.
    await expect(
      resumeSending({ db, thresholds, now: () => new Date() }, newId(), bad, undefined),
    ).rejects.toMatchObject({
      statusCode: 404,
    });
  });

  it('sends a delivery again at once when its pause was lifted before it could be parked', async () => {
    const teamId = newId();
    const command = { email_id: newId(), domain: 'example.org', recipients: [0], attempt: 2 };
    await db.transaction().execute((trx) => parkDeliveries(trx, [{ teamId, domainId: newId(), command }], new Date()));
    expect(await db.selectFrom('parked_deliveries').selectAll().where('team_id', '=', teamId).execute()).toEqual([]);
    expect(await outboxTypes(teamId)).toEqual(['sender.deliver']);
  });
});

describe('a team’s own lines', () => {
  const own = { bounceRate: null, complaintRate: null, window: null, minSends: null };

  it('judges a team by the lines the operator set for it, and the others by the install’s', async () => {
    const lenient = newId();
    const other = newId();
    const domainId = newId();
    // A 50% bounce line, judged from five sends; the window stays the install's (20).
    await saveTeamThresholds(db, lenient, { ...own, bounceRate: 0.5, minSends: 5 }, new Date());
    // A push older than the one kept changes nothing (pushes may be repeated or reordered).
    await saveTeamThresholds(db, lenient, { ...own, bounceRate: 0.9 }, new Date(Date.now() - 60_000));
    for (const teamId of [lenient, other]) await record({ teamId, domainId, sends: 10, bounces: 3, complaints: 0 });
    // 30%: over the install's 4% line, under the lenient team's 50%.
    expect(await outboxTypes(other)).toEqual(['internal.reputation.paused']);
    expect(await outboxTypes(lenient)).toEqual([]);
    let view = await readReputation({ db, thresholds, now: () => new Date() }, lenient);
    expect(view.team.pause).toBeUndefined();
    expect(view.thresholds).toEqual({
      bounceRate: 0.5,
      complaintRate: 0.0008,
      window: 20,
      minSends: 5,
      setForTeam: ['bounce_rate', 'min_sends'],
    });
    expect((await readReputation({ db, thresholds, now: () => new Date() }, other)).thresholds).toEqual({
      ...thresholds,
      setForTeam: [],
    });

    // 55% over its twenty sends: above its own line, which the pause and its event state.
    await record({ teamId: lenient, domainId, sends: 10, bounces: 8, complaints: 0 });
    view = await readReputation({ db, thresholds, now: () => new Date() }, lenient);
    expect(view.team.pause).toMatchObject({ reason: 'bounce_rate', sends: 20, bounceRate: 0.55, line: 0.5 });
    const { rows } = await sql<{ envelope: { data: { thresholds: unknown } } }>`select envelope from outbox
      where envelope->>'team_id' = ${lenient} and routing_key = 'internal.reputation.paused'`.execute(db);
    expect(rows.map((r) => r.envelope.data.thresholds)).toEqual([
      { bounce_rate: 0.5, complaint_rate: 0.0008, window: 20, min_sends: 5 },
    ]);
  });

  it('keeps judging what a window holds when its team’s window shrinks', async () => {
    const teamId = newId();
    const domainId = newId();
    // The install's lines here: a window of 100 sends (buckets of 10) and a 50% bounce line.
    const guardFor = { ...guard(), thresholds: { ...thresholds, window: 100, bounceRate: 0.5 } };
    // The window holds a hundred sends, ten of them bounced: under the 50% line.
    for (let i = 0; i < 10; i++) {
      await db
        .transaction()
        .execute((trx) =>
          addReputationDeltas(trx, [{ teamId, domainId, sends: 10, bounces: 1, complaints: 0 }], new Date()),
        );
      await foldReputation(guardFor);
    }
    expect(await outboxTypes(teamId)).toEqual([]);
    // The operator gives the team a window of 20 sends (buckets of 2), judged from 20, and a 4% line.
    await saveTeamThresholds(db, teamId, { ...own, bounceRate: 0.04, window: 20, minSends: 20 }, new Date());
    await db
      .transaction()
      .execute((trx) =>
        addReputationDeltas(trx, [{ teamId, domainId, sends: 2, bounces: 0, complaints: 0 }], new Date()),
      );
    await foldReputation(guardFor);
    // What it held (its last nine full buckets: ninety sends, nine bounces) is cut into the new window with
    // the two new sends, and judged by the new lines: 9 bounces in 92 sends.
    const view = await readReputation({ ...guardFor }, teamId);
    expect(view.team).toMatchObject({ sends: 92, bounces: 9 });
    expect(view.team.pause).toMatchObject({ reason: 'bounce_rate', sends: 92, line: 0.04 });
  });

  it('lets old outcomes leave a window once a new window’s worth of sends follows, when its team’s window grows', async () => {
    const teamId = newId();
    const domainId = newId();
    // Forty sends in the install's window of 20 (buckets of 2): its last nine full buckets held, the last ten
    // sends bounced.
    for (let i = 0; i < 20; i++) await record({ teamId, domainId, sends: 2, bounces: i >= 15 ? 2 : 0, complaints: 0 });
    expect((await readReputation({ db, thresholds, now: () => new Date() }, teamId)).team).toMatchObject({
      sends: 18,
      bounces: 10,
    });
    // A window of 100 (buckets of 10): what the window held stays in it, then 100 clean sends push it out.
    await saveTeamThresholds(db, teamId, { ...own, window: 100, minSends: 100 }, new Date());
    await record({ teamId, domainId, sends: 10, bounces: 0, complaints: 0 });
    expect((await readReputation({ db, thresholds, now: () => new Date() }, teamId)).team).toMatchObject({
      sends: 28,
      bounces: 10,
    });
    for (let i = 0; i < 10; i++) await record({ teamId, domainId, sends: 10, bounces: 0, complaints: 0 });
    expect((await readReputation({ db, thresholds, now: () => new Date() }, teamId)).team).toMatchObject({
      sends: 90,
      bounces: 0,
    });
  });
});
