import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_RETENTION_DAYS } from '@postline/contracts';
import { asUser, createUser, ORIGIN, PASSWORD, signIn } from './accounts-harness.ts';
import { call, startGateway, type Gateway } from './harness.ts';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ env: { SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000' } });
});
afterAll(async () => {
  await gw.stop();
});

const tokenOf = (url: unknown) => new URL(String(url)).searchParams.get('token')!;
const actions = async (teamId: string) =>
  (await gw.db.selectFrom('audit_log').select('action').where('team_id', '=', teamId).orderBy('id').execute()).map(
    (r) => r.action,
  );

describe('members', () => {
  it('are listed and managed by admins only; a team keeps one admin', async () => {
    const team = await gw.createTeam();
    const owner = await createUser(gw, [[team.teamId, 'admin']]);
    const other = await createUser(gw, [[team.teamId, 'member']]);
    const a = await signIn(gw, owner.email);
    const m = await signIn(gw, other.email);
    const list = await asUser(gw, a, 'GET', '/dashboard-api/members');
    expect((list.body.data as { id: string; role: string }[]).map((x) => [x.id, x.role])).toEqual([
      [owner.id, 'admin'],
      [other.id, 'member'],
    ]);
    const denied = await asUser(gw, m, 'GET', '/dashboard-api/members');
    expect(denied.status).toBe(403);
    expect(denied.body.name).toBe('invalid_permission');
    expect(
      (await asUser(gw, m, 'PATCH', `/dashboard-api/members/${other.id}`, { body: { role: 'admin' } })).status,
    ).toBe(403);

    const last = await asUser(gw, a, 'PATCH', `/dashboard-api/members/${owner.id}`, { body: { role: 'member' } });
    expect(last.status).toBe(422);
    expect((await asUser(gw, a, 'DELETE', `/dashboard-api/members/${owner.id}`)).status).toBe(422);
    const bad = await asUser(gw, a, 'PATCH', `/dashboard-api/members/${other.id}`, { body: { role: 'owner' } });
    expect(bad.status).toBe(422);
    const promoted = await asUser(gw, a, 'PATCH', `/dashboard-api/members/${other.id}`, { body: { role: 'admin' } });
    expect(promoted.body).toEqual({ object: 'member', id: other.id, role: 'admin' });
    expect((await asUser(gw, m, 'GET', '/api-keys')).status).toBe(200);
    // Removed, the other's session no longer reaches the team.
    const removed = await asUser(gw, a, 'DELETE', `/dashboard-api/members/${other.id}`);
    expect(removed.body).toEqual({ object: 'member', id: other.id, deleted: true });
    expect((await asUser(gw, m, 'GET', '/logs')).body.name).toBe('invalid_permission');
    expect((await asUser(gw, a, 'DELETE', `/dashboard-api/members/${other.id}`)).status).toBe(404);
    expect(await actions(team.teamId)).toEqual(['members.updated', 'members.deleted']);
  });
});

describe('invites', () => {
  it('a single-use link the admin copies creates the invited user in the team', async () => {
    const team = await gw.createTeam();
    const owner = await createUser(gw, [[team.teamId, 'admin']]);
    const a = await signIn(gw, owner.email);
    const created = await asUser(gw, a, 'POST', '/dashboard-api/invites', { body: { email: 'new@example.com' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'invite', email: 'new@example.com', role: 'member' });
    const token = tokenOf(created.body.url);
    expect(String(created.body.url)).toMatch(/^http:\/\/localhost:3000\/dashboard\/invite\?token=/);
    const stored = await gw.db
      .selectFrom('invites')
      .selectAll()
      .where('id', '=', String(created.body.id))
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(((await asUser(gw, a, 'GET', '/dashboard-api/invites')).body.data as unknown[]).length).toBe(1);

    const shown = await call(gw, 'GET', `/dashboard-api/invites/accept?token=${token}`);
    expect(shown.body).toMatchObject({
      email: 'new@example.com',
      role: 'member',
      existing_user: false,
      team: { id: team.teamId },
    });
    const noName = await call(gw, 'POST', '/dashboard-api/invites/accept', {
      body: { token, password: 'a long password' },
    });
    expect(noName.status).toBe(422);
    const accepted = await call(gw, 'POST', '/dashboard-api/invites/accept', {
      body: { token, name: 'New', password: 'a long password' },
      headers: { origin: ORIGIN },
    });
    expect(accepted.status).toBe(201);
    expect(accepted.body).toMatchObject({
      user: { email: 'new@example.com' },
      team: { id: team.teamId, role: 'member' },
    });
    const again = await call(gw, 'POST', '/dashboard-api/invites/accept', {
      body: { token, name: 'New', password: 'a long password' },
    });
    expect(again.status).toBe(404);
    await signIn(gw, 'new@example.com', 'a long password');
    expect(await actions(team.teamId)).toEqual(['invites.created', 'members.created']);
  });

  it('an existing user joins with their own password; a revoked invite is dead', async () => {
    const team = await gw.createTeam();
    const elsewhere = await gw.createTeam();
    const owner = await createUser(gw, [[team.teamId, 'admin']]);
    const user = await createUser(gw, [[elsewhere.teamId, 'admin']]);
    const a = await signIn(gw, owner.email);
    const invite = await asUser(gw, a, 'POST', '/dashboard-api/invites', {
      body: { email: user.email, role: 'admin' },
    });
    const token = tokenOf(invite.body.url);
    const wrong = await call(gw, 'POST', '/dashboard-api/invites/accept', { body: { token, password: 'wrong' } });
    expect(wrong.status).toBe(401);
    const joined = await call(gw, 'POST', '/dashboard-api/invites/accept', { body: { token, password: PASSWORD } });
    expect(joined.status).toBe(201);
    expect((joined.body.teams as unknown[]).length).toBe(2);
    expect(joined.body.team).toMatchObject({ id: team.teamId, role: 'admin' });
    const dup = await asUser(gw, a, 'POST', '/dashboard-api/invites', { body: { email: user.email } });
    expect(dup.status).toBe(422);

    const revoked = await asUser(gw, a, 'POST', '/dashboard-api/invites', { body: { email: 'later@example.com' } });
    expect((await asUser(gw, a, 'DELETE', `/dashboard-api/invites/${String(revoked.body.id)}`)).status).toBe(200);
    expect((await call(gw, 'GET', `/dashboard-api/invites/accept?token=${tokenOf(revoked.body.url)}`)).status).toBe(
      404,
    );
  });
});

describe('password resets', () => {
  it('a single-use link an admin makes for a member sets a new password and signs them out everywhere', async () => {
    const team = await gw.createTeam();
    const outsider = await gw.createTeam();
    const owner = await createUser(gw, [[team.teamId, 'admin']]);
    const member = await createUser(gw, [[team.teamId, 'member']]);
    const stranger = await createUser(gw, [[outsider.teamId, 'admin']]);
    const a = await signIn(gw, owner.email);
    const m = await signIn(gw, member.email);
    expect(
      (await asUser(gw, a, 'POST', '/dashboard-api/password-resets', { body: { user_id: stranger.id } })).status,
    ).toBe(404);
    expect(
      (await asUser(gw, m, 'POST', '/dashboard-api/password-resets', { body: { user_id: owner.id } })).status,
    ).toBe(403);
    const reset = await asUser(gw, a, 'POST', '/dashboard-api/password-resets', { body: { user_id: member.id } });
    expect(reset.status).toBe(201);
    expect(String(reset.body.url)).toMatch(/^http:\/\/localhost:3000\/dashboard\/reset-password\?token=/);
    const token = tokenOf(reset.body.url);
    const weak = await call(gw, 'POST', '/dashboard-api/password-resets/complete', {
      body: { token, password: 'short' },
    });
    expect(weak.status).toBe(422);
    const done = await call(gw, 'POST', '/dashboard-api/password-resets/complete', {
      body: { token, password: 'another long password' },
    });
    expect(done.body).toEqual({ object: 'user', id: member.id });
    expect((await asUser(gw, m, 'GET', '/dashboard-api/session')).status).toBe(401);
    await signIn(gw, member.email, 'another long password');
    const again = await call(gw, 'POST', '/dashboard-api/password-resets/complete', {
      body: { token, password: 'yet another password' },
    });
    expect(again.status).toBe(404);
  });
});

describe('asking for a password reset', () => {
  it('answers 202 whether or not an account has the address, and without configured email sends nothing', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'member']]);
    const resets = async () => (await gw.db.selectFrom('password_resets').select('user_id').execute()).length;
    const before = await resets();
    for (const email of [user.email, 'nobody-here@example.com']) {
      const r = await call(gw, 'POST', '/dashboard-api/password-resets/request', {
        body: { email },
        headers: { origin: ORIGIN },
      });
      expect(r.status).toBe(202);
      expect(r.body).toEqual({ object: 'password_reset_request' });
    }
    expect(await resets()).toBe(before);
    const bad = await call(gw, 'POST', '/dashboard-api/password-resets/request', { body: { email: 'not an address' } });
    expect(bad.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    const missing = await call(gw, 'POST', '/dashboard-api/password-resets/request', { body: {} });
    expect(missing.body).toMatchObject({ statusCode: 422, name: 'missing_required_field' });
    const elsewhere = await call(gw, 'POST', '/dashboard-api/password-resets/request', {
      body: { email: user.email },
      headers: { origin: 'https://evil.example' },
    });
    expect(elsewhere.status).toBe(403);
  });

  it('is limited per client address like sign-in', async () => {
    const limited = await startGateway({ env: { SIGN_IN_ATTEMPTS_PER_ADDRESS: '2' } });
    try {
      const ask = () =>
        call(limited, 'POST', '/dashboard-api/password-resets/request', { body: { email: 'a@example.com' } });
      expect((await ask()).status).toBe(202);
      expect((await ask()).status).toBe(202);
      const third = await ask();
      expect(third.status).toBe(429);
      expect(third.body.name).toBe('rate_limit_exceeded');
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.stop();
    }
  });
});

describe('the team', () => {
  it('shows the session’s team with its role, access, rate limit and retention, also while its access is off', async () => {
    const team = await gw.createTeam({ rateLimit: 7 });
    const member = await createUser(gw, [[team.teamId, 'member']]);
    const s = await signIn(gw, member.email);
    const r = await asUser(gw, s, 'GET', '/dashboard-api/team');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      object: 'team',
      id: team.teamId,
      name: 'team',
      role: 'member',
      access_enabled: true,
      rate_limit_per_second: 7,
      retention_days: DEFAULT_RETENTION_DAYS,
      created_at: expect.any(String),
    });
    await gw.db.updateTable('teams').set({ retention_days: 90 }).where('id', '=', team.teamId).execute();
    expect((await asUser(gw, s, 'GET', '/dashboard-api/team')).body).toMatchObject({ retention_days: 90 });
    await gw.db.updateTable('teams').set({ access_enabled: false }).where('id', '=', team.teamId).execute();
    expect((await asUser(gw, s, 'GET', '/dashboard-api/team')).body).toMatchObject({ access_enabled: false });
    expect((await call(gw, 'GET', '/dashboard-api/team', { headers: { cookie: s.cookie } })).status).toBe(403);
    expect((await call(gw, 'GET', '/dashboard-api/team')).status).toBe(401);
  });
});
