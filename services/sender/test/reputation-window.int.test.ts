// The reputation guard's window and pauses on a real Postgres: the window holds the last sends (older
// buckets leave it), a domain is paused on its own only while its team is not, a resume forgets the outcomes
// recorded before it, and a delivery parked after its pause was lifted is sent again rather than kept.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createDb, newId, type Logger } from '@postline/platform';
import { createTestDatabase, type TestDatabase } from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import type { SenderDb } from '../src/db/schema.ts';
import { addReputationDeltas, type ReputationDelta } from '../src/reputation/db/reputation.ts';
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
