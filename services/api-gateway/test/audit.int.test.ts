import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'kysely';
import { waitFor } from '@postline/testing';
import { asUser, createUser, signIn, type SignedIn } from './accounts-harness.ts';
import { call, startGateway, type Gateway } from './harness.ts';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ env: { SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000' } });
});
afterAll(async () => {
  await gw.stop();
});

type Entry = { action: string; actor: Record<string, unknown>; target: { type: string; id: string }; ip: string };

async function entries(s: SignedIn, query = ''): Promise<Entry[]> {
  const r = await asUser(gw, s, 'GET', `/dashboard-api/audit-log${query}`);
  expect(r.status).toBe(200);
  return r.body.data as Entry[];
}

const rowsOf = async (teamId: string) =>
  (await gw.db.selectFrom('audit_log').select('id').where('team_id', '=', teamId).execute()).length;

describe('the audit log', () => {
  it('records who changed what in a team, by session or by key, and lists it newest first', async () => {
    const team = await gw.createTeam();
    const admin = await createUser(gw, [[team.teamId, 'admin']]);
    const s = await signIn(gw, admin.email);
    const created = await asUser(gw, s, 'POST', '/api-keys', {
      body: { name: 'ci' },
      headers: { 'user-agent': 'dash' },
    });
    const id = String(created.body.id);
    await asUser(gw, s, 'PATCH', `/api-keys/${id}`, { body: { name: 'ci-2' } });
    const byKey = await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: 'from a key' } });
    await call(gw, 'DELETE', `/api-keys/${id}`, { key: team.apiKey });
    // Neither a failed change nor a read is recorded.
    expect((await asUser(gw, s, 'POST', '/api-keys', { body: {} })).status).toBe(422);
    await asUser(gw, s, 'GET', '/api-keys');
    // Each change's entry is written before its answer leaves.
    expect(await rowsOf(team.teamId)).toBe(4);

    const all = await entries(s);
    expect(all.map((e) => [e.action, e.target.id])).toEqual([
      ['api-keys.deleted', id],
      ['api-keys.created', String(byKey.body.id)],
      ['api-keys.updated', id],
      ['api-keys.created', id],
    ]);
    expect(all[3]).toMatchObject({
      actor: { type: 'user', id: admin.id, email: admin.email },
      target: { type: 'api-keys', id },
      method: 'POST',
      endpoint: '/api-keys',
      user_agent: 'dash',
    });
    expect(all[3]!.ip).toBeTruthy();
    expect(all[0]!.actor).toEqual({ type: 'api_key', id: team.keyId, name: 'test' });

    // Filters: a whole action, a family, an actor, a target; pagination as everywhere.
    expect((await entries(s, '?action=api-keys.created')).map((e) => e.target.id)).toEqual([String(byKey.body.id), id]);
    expect(await entries(s, '?action=api-keys')).toHaveLength(4);
    expect(await entries(s, `?actor_id=${admin.id}`)).toHaveLength(2);
    expect(await entries(s, `?target_id=${id}`)).toHaveLength(3);
    expect(await entries(s, '?actor_id=nope')).toEqual([]);
    const page = await asUser(gw, s, 'GET', '/dashboard-api/audit-log?limit=1');
    expect(page.body.has_more).toBe(true);
    expect((await asUser(gw, s, 'GET', '/dashboard-api/audit-log?limit=0')).status).toBe(422);
  });

  it('holds a change’s answer until its entry is written', async () => {
    const team = await gw.createTeam();
    let answered = false;
    let answer: Promise<Awaited<ReturnType<typeof call>>> | undefined;
    await gw.db.transaction().execute(async (trx) => {
      // Inserts into the audit log wait for this lock; reads do not.
      await sql`lock table audit_log in exclusive mode`.execute(trx);
      answer = call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: 'held' } });
      void answer.then(() => (answered = true));
      await waitFor('the entry’s insert to wait on the lock', async () => {
        const { rows } = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and query like 'insert into "audit_log"%'`.execute(gw.db);
        return rows[0]!.n > 0;
      });
      // A request made after the change's answer would have left comes back first.
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
      expect(answered).toBe(false);
    });
    expect((await answer!).status).toBe(201);
    expect(await rowsOf(team.teamId)).toBe(1);
  });

  it('lets a change’s answer go when its entry cannot be written in time; the entry follows', async () => {
    const team = await gw.createTeam();
    await gw.db.transaction().execute(async (trx) => {
      await sql`lock table audit_log in exclusive mode`.execute(trx);
      // The insert waits on the lock for as long as it is held; the answer does not.
      const answer = await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: 'late' } });
      expect(answer.status).toBe(201);
      expect(await rowsOf(team.teamId)).toBe(0);
    });
    await waitFor('the late entry', async () => (await rowsOf(team.teamId)) === 1);
  });

  it('shows a team only its own entries, to members as well', async () => {
    const a = await gw.createTeam();
    const b = await gw.createTeam();
    await call(gw, 'POST', '/api-keys', { key: b.apiKey, body: { name: 'b' } });
    expect(await rowsOf(b.teamId)).toBe(1);
    const member = await signIn(gw, (await createUser(gw, [[a.teamId, 'member']])).email);
    expect(await entries(member)).toEqual([]);
    // Without the CSRF header, nothing.
    const r = await call(gw, 'GET', '/dashboard-api/audit-log', { headers: { cookie: member.cookie } });
    expect(r.status).toBe(403);
  });
});

describe('GET /audit-log', () => {
  it('serves the same list to a full-access key and a session, with the same filters, and refuses a sending key', async () => {
    const team = await gw.createTeam();
    const other = await gw.createTeam();
    const s = await signIn(gw, (await createUser(gw, [[team.teamId, 'member']])).email);
    const created = await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: 'one' } });
    await call(gw, 'PATCH', `/api-keys/${String(created.body.id)}`, { key: team.apiKey, body: { name: 'two' } });
    await call(gw, 'POST', '/api-keys', { key: other.apiKey, body: { name: 'theirs' } });
    expect(await rowsOf(team.teamId)).toBe(2);

    const byKey = await call(gw, 'GET', '/audit-log', { key: team.apiKey });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toEqual({ object: 'list', has_more: false, data: await entries(s) });
    expect((byKey.body.data as Entry[]).map((e) => e.action)).toEqual(['api-keys.updated', 'api-keys.created']);
    const bySession = await asUser(gw, s, 'GET', '/audit-log?action=api-keys.updated');
    expect((bySession.body.data as Entry[]).map((e) => e.action)).toEqual(['api-keys.updated']);
    const paged = await call(gw, 'GET', '/audit-log?limit=1', { key: team.apiKey });
    expect(paged.body.has_more).toBe(true);
    for (const q of ['limit=0', `action=${'x'.repeat(101)}`]) {
      const bad = await call(gw, 'GET', `/audit-log?${q}`, { key: team.apiKey });
      expect(bad.status).toBe(422);
      expect(bad.body.name).toBe('validation_error');
    }
    const sending = await gw.createKey(team.teamId, 'sending_access');
    expect((await call(gw, 'GET', '/audit-log', { key: sending.apiKey })).body.name).toBe('restricted_api_key');
    expect((await call(gw, 'GET', '/audit-log')).status).toBe(401);
  });
});
