import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sha256Hex } from '@postline/platform';
import { setTeamAccess } from '../src/db/teams.ts';
import { SESSION_COOKIE } from '../src/domain/session.ts';
import { asUser, createUser, ORIGIN, PASSWORD, signIn } from './accounts-harness.ts';
import { call, startGateway, type Gateway } from './harness.ts';

let gw: Gateway;
beforeAll(async () => {
  // Every request here comes from one address: its own limit is tested on a gateway of its own.
  gw = await startGateway({ env: { SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000' } });
});
afterAll(async () => {
  await gw.stop();
});

// First: the database is fresh, so the gateway printed a setup link at start.
describe('the first account', () => {
  it('is created once through the setup link printed at start, which then signs in', async () => {
    const link = gw.setupLink();
    expect(link).toMatch(/^http:\/\/localhost:3000\/dashboard\/setup\?token=[A-Za-z0-9_-]{40,}$/);
    const token = new URL(link!).searchParams.get('token')!;
    const stored = await gw.db.selectFrom('setup_tokens').selectAll().execute();
    expect(stored.map((t) => t.token_hash)).toEqual([sha256Hex(token)]);
    expect((await call(gw, 'GET', `/dashboard-api/setup?token=${token}`)).body).toEqual({
      object: 'setup',
      valid: true,
    });

    const form = {
      token,
      email: 'Owner@Example.com',
      name: 'Owner',
      password: 'long enough password',
      team_name: 'Acme',
    };
    const weak = await call(gw, 'POST', '/dashboard-api/setup', { body: { ...form, password: 'short' } });
    expect(weak.status).toBe(422);
    expect(weak.body.name).toBe('validation_error');
    const elsewhere = await call(gw, 'POST', '/dashboard-api/setup', {
      body: form,
      headers: { origin: 'https://evil.test' },
    });
    expect(elsewhere.status).toBe(403);
    expect(await gw.db.selectFrom('users').selectAll().execute()).toEqual([]);

    const created = await call(gw, 'POST', '/dashboard-api/setup', { body: form, headers: { origin: ORIGIN } });
    expect(created.status).toBe(201);
    expect(created.headers.get('set-cookie')).toMatch(
      new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{40,}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=604800$`),
    );
    expect(created.body).toMatchObject({
      object: 'session',
      user: { email: 'Owner@Example.com', name: 'Owner' },
      team: { name: 'Acme', role: 'admin', access_enabled: true },
    });

    const again = await call(gw, 'POST', '/dashboard-api/setup', { body: { ...form, email: 'x@example.com' } });
    expect(again.status).toBe(404);
    expect((await call(gw, 'GET', `/dashboard-api/setup?token=${token}`)).status).toBe(404);
    // The owner signs in with any case of the address.
    await signIn(gw, 'owner@example.com', 'long enough password');
  });
});

describe('the admin CLI', () => {
  const cli = (...args: string[]) =>
    promisify(execFile)(process.execPath, [new URL('../src/admin/cli.ts', import.meta.url).pathname, ...args], {
      env: { ...process.env, DATABASE_URL: gw.databaseUrl, LOG_LEVEL: 'silent' },
    });

  it('creates a user for an existing team, with a password shown once', async () => {
    const team = await gw.createTeam();
    const other = await gw.createTeam();
    const email = 'cli-user@example.com';
    const { stdout } = await cli(
      'user',
      'create',
      '--team',
      team.teamId,
      '--email',
      email,
      '--name',
      'Cli',
      '--role',
      'member',
    );
    const line = JSON.parse(stdout) as Record<string, string>;
    expect(line).toMatchObject({ team_id: team.teamId, email, role: 'member' });
    const s = await signIn(gw, email, line.password);
    expect(s.body.team).toMatchObject({ id: team.teamId, role: 'member' });
    // An existing user joins another team and keeps their password.
    const joined = await cli('user', 'create', '--team', other.teamId, '--email', email);
    expect(JSON.parse(joined.stdout)).toEqual({ user_id: line.user_id, team_id: other.teamId, email, role: 'admin' });
    await signIn(gw, email, line.password, other.teamId);
    await expect(cli('user', 'create', '--team', other.teamId, '--email', email)).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('already a member'),
    });
    await expect(
      cli('user', 'create', '--team', team.teamId, '--email', 'x@example.com', '--role', 'owner'),
    ).rejects.toMatchObject({
      code: 2,
    });
  });

  it('issues an API key for an existing team, its token shown once', async () => {
    const team = await gw.createTeam();
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const { stdout } = await cli(
      'key',
      'create',
      '--team',
      team.teamId,
      '--name',
      'CI',
      '--permission',
      'sending_access',
      '--expires-at',
      expires,
    );
    const line = JSON.parse(stdout) as Record<string, string>;
    expect(Object.keys(line).sort()).toEqual(['id', 'token']);
    expect(line.token).toMatch(/^pl_/);
    const stored = await gw.db.selectFrom('api_keys').selectAll().where('id', '=', line.id!).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ team_id: team.teamId, name: 'CI', permission: 'sending_access' });
    expect(stored.expires_at?.toISOString()).toBe(expires);
    // A sending_access key: refused outside sending, but a key of the team.
    expect((await call(gw, 'GET', '/api-keys', { key: line.token })).body.name).toBe('restricted_api_key');
    const plain = JSON.parse((await cli('key', 'create', '--team', team.teamId, '--name', 'Ops')).stdout) as {
      token: string;
    };
    expect((await call(gw, 'GET', '/api-keys', { key: plain.token })).status).toBe(200);
    for (const args of [
      ['--name', 'x', '--permission', 'admin'],
      ['--name', 'x', '--expires-at', 'soon'],
      ['--name', 'x', '--expires-at', '2020-01-01T00:00:00Z'],
      [],
    ])
      await expect(cli('key', 'create', '--team', team.teamId, ...args)).rejects.toMatchObject({ code: 2 });
  });

  it('sets a team’s retention, marked for the other services to be told, and refuses days outside 1 to 3650', async () => {
    const team = await gw.createTeam();
    const line = JSON.parse(
      (await cli('team', 'set-retention', '--team', team.teamId, '--days', '90')).stdout,
    ) as unknown;
    expect(line).toEqual({ team_id: team.teamId, retention_days: 90 });
    const row = await gw.db
      .selectFrom('teams')
      .select(['retention_days', 'retention_unsynced'])
      .where('id', '=', team.teamId)
      .executeTakeFirstOrThrow();
    // The harness's gateway has no owners to push to: the change stays marked until they answer.
    expect(row).toEqual({ retention_days: 90, retention_unsynced: true });
    for (const days of ['0', '3651', '1.5', 'x'])
      await expect(cli('team', 'set-retention', '--team', team.teamId, '--days', days)).rejects.toMatchObject({
        code: 2,
      });
  });

  it('sets a team’s reputation lines one by one, marked for the sender to be told, and clears them', async () => {
    const team = await gw.createTeam();
    const row = () =>
      gw.db
        .selectFrom('teams')
        .select([
          'reputation_bounce_rate',
          'reputation_complaint_rate',
          'reputation_window',
          'reputation_min_sends',
          'reputation_unsynced',
        ])
        .where('id', '=', team.teamId)
        .executeTakeFirstOrThrow();
    const set = async (...args: string[]) =>
      JSON.parse((await cli('team', 'set-reputation', '--team', team.teamId, ...args)).stdout) as unknown;
    expect(await set('--bounce-rate', '0.05', '--complaint-rate', '0.001')).toEqual({
      team_id: team.teamId,
      reputation_thresholds: { bounce_rate: 0.05, complaint_rate: 0.001, window: null, min_sends: null },
    });
    // The harness's gateway has no sender to push to: the change stays marked until it answers.
    expect(await row()).toEqual({
      reputation_bounce_rate: 0.05,
      reputation_complaint_rate: 0.001,
      reputation_window: null,
      reputation_min_sends: null,
      reputation_unsynced: true,
    });
    // A later command keeps the lines it does not name; "default" gives one back to the install.
    expect(await set('--window', '5000', '--min-sends', '1000', '--complaint-rate', 'default')).toEqual({
      team_id: team.teamId,
      reputation_thresholds: { bounce_rate: 0.05, complaint_rate: null, window: 5000, min_sends: 1000 },
    });
    for (const args of [
      [],
      ['--bounce-rate', '0'],
      ['--bounce-rate', '5%'],
      ['--bounce-rate', '1.5'],
      ['--complaint-rate', ''],
      ['--window', '0'],
      ['--window', '2.5'],
      ['--min-sends', 'lots'],
      // Above the team's window of 5,000: a minimum no window reaches.
      ['--min-sends', '6000'],
    ])
      await expect(cli('team', 'set-reputation', '--team', team.teamId, ...args)).rejects.toMatchObject({
        code: 2,
      });
    expect(await row()).toMatchObject({
      reputation_bounce_rate: 0.05,
      reputation_window: 5000,
      reputation_min_sends: 1000,
    });

    const cleared = JSON.parse((await cli('team', 'clear-reputation', '--team', team.teamId)).stdout) as unknown;
    expect(cleared).toEqual({
      team_id: team.teamId,
      reputation_thresholds: { bounce_rate: null, complaint_rate: null, window: null, min_sends: null },
    });
    expect(await row()).toEqual({
      reputation_bounce_rate: null,
      reputation_complaint_rate: null,
      reputation_window: null,
      reputation_min_sends: null,
      reputation_unsynced: true,
    });
  });

  it('exits 1, not 2 (a usage error), for a well-formed team id that names no team', async () => {
    const missing = '01a21ae0-cde7-75ab-9b3c-000000000000';
    for (const args of [
      ['team', 'disable', '--team', missing],
      ['team', 'set-rate-limit', '--team', missing, '--per-second', '5'],
      ['team', 'set-retention', '--team', missing, '--days', '90'],
      ['team', 'set-reputation', '--team', missing, '--bounce-rate', '0.05'],
      ['team', 'clear-reputation', '--team', missing],
      ['user', 'create', '--team', missing, '--email', 'nobody@example.com'],
      ['key', 'create', '--team', missing, '--name', 'x'],
    ])
      await expect(cli(...args)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining(`no team ${missing}`),
      });
  });
});

describe('sessions', () => {
  it('signs in with a server-side session whose token is stored only as a hash', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'admin']]);
    const s = await signIn(gw, user.email);
    const token = s.cookie.split('=')[1]!;
    const row = await gw.db.selectFrom('sessions').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256Hex(token));
    expect(JSON.stringify(row)).not.toContain(token);
    expect(s.body).toMatchObject({
      object: 'session',
      user: { id: user.id, email: user.email },
      team: { id: team.teamId, role: 'admin' },
      teams: [{ id: team.teamId, role: 'admin' }],
    });
    // GET /session needs no CSRF header: it is where the client learns it.
    const current = await call(gw, 'GET', '/dashboard-api/session', { headers: { cookie: s.cookie } });
    expect(current.body.csrf_token).toBe(s.csrf);
  });

  it('answers a wrong password and an unknown account alike', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'member']]);
    const wrong = await call(gw, 'POST', '/dashboard-api/session', { body: { email: user.email, password: 'nope' } });
    const unknown = await call(gw, 'POST', '/dashboard-api/session', {
      body: { email: 'nobody@example.com', password: PASSWORD },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body).toEqual({ statusCode: 401, name: 'invalid_credentials', message: 'Invalid email or password.' });
    const missing = await call(gw, 'POST', '/dashboard-api/session', { body: { email: user.email } });
    expect(missing.body.name).toBe('missing_required_field');
    const broken = await call(gw, 'POST', '/dashboard-api/session', { raw: '{' });
    expect(broken.status).toBe(400);
    expect(broken.body.name).toBe('validation_error');
    for (const email of ['a\\u0000b@example.com', '\\ud800@example.com']) {
      const r = await call(gw, 'POST', '/dashboard-api/session', { raw: `{"email":"${email}","password":"x"}` });
      expect(r.status).toBe(422);
    }
  });

  it('lists the user’s sessions and revokes one', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'member']]);
    const a = await signIn(gw, user.email);
    const b = await signIn(gw, user.email);
    const list = await asUser(gw, a, 'GET', '/dashboard-api/sessions');
    expect(list.status).toBe(200);
    const data = list.body.data as { id: string; current: boolean }[];
    expect(data.map((s) => [s.id, s.current])).toEqual([
      [b.id, false],
      [a.id, true],
    ]);
    expect((await asUser(gw, a, 'DELETE', `/dashboard-api/sessions/${b.id}`)).body).toEqual({
      object: 'session',
      id: b.id,
      deleted: true,
    });
    const revoked = await asUser(gw, b, 'GET', '/dashboard-api/session');
    expect(revoked.status).toBe(401);
    expect(revoked.body.name).toBe('invalid_session');
    expect((await asUser(gw, a, 'DELETE', `/dashboard-api/sessions/${b.id}`)).status).toBe(404);
    // Another user's session is not found either.
    const other = await signIn(gw, (await createUser(gw, [[team.teamId, 'member']])).email);
    expect((await asUser(gw, a, 'DELETE', `/dashboard-api/sessions/${other.id}`)).status).toBe(404);
    expect((await asUser(gw, other, 'GET', '/dashboard-api/session')).status).toBe(200);
  });

  it('signs out', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'admin']]);
    const s = await signIn(gw, user.email);
    const out = await asUser(gw, s, 'DELETE', '/dashboard-api/session');
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await asUser(gw, s, 'GET', '/api-keys')).body.name).toBe('invalid_session');
  });

  it('ends a session left idle, and any session past its absolute expiry', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'admin']]);
    const idle = await signIn(gw, user.email);
    const old = await signIn(gw, user.email);
    await gw.db
      .updateTable('sessions')
      .set({ last_seen_at: new Date(Date.now() - 721 * 60_000) })
      .where('id', '=', idle.id)
      .execute();
    await gw.db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', old.id)
      .execute();
    expect((await asUser(gw, idle, 'GET', '/api-keys')).status).toBe(401);
    expect((await asUser(gw, old, 'GET', '/dashboard-api/session')).status).toBe(401);
  });

  it('a password change signs out every other session', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'member']]);
    const a = await signIn(gw, user.email);
    const b = await signIn(gw, user.email);
    const wrong = await asUser(gw, a, 'PUT', '/dashboard-api/password', {
      body: { current_password: 'wrong', new_password: 'a new long password' },
    });
    expect(wrong.status).toBe(401);
    expect((await asUser(gw, b, 'GET', '/dashboard-api/session')).status).toBe(200);
    const changed = await asUser(gw, a, 'PUT', '/dashboard-api/password', {
      body: { current_password: PASSWORD, new_password: 'a new long password' },
    });
    expect(changed.body).toEqual({ object: 'user', id: user.id });
    expect((await asUser(gw, b, 'GET', '/dashboard-api/session')).status).toBe(401);
    expect((await asUser(gw, a, 'GET', '/dashboard-api/session')).status).toBe(200);
    await expect(signIn(gw, user.email)).rejects.toThrow('401');
    await signIn(gw, user.email, 'a new long password');
  });

  it('answers JSON 404 under the prefix, never the public API', async () => {
    const r = await call(gw, 'GET', '/dashboard-api/nothing');
    expect(r.status).toBe(404);
    expect(r.body.name).toBe('not_found');
  });
});

describe('the public API with a session', () => {
  it('answers the same routes with the same JSON as a bearer key', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'admin']]);
    const s = await signIn(gw, user.email);
    const byKey = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    const bySession = await asUser(gw, s, 'GET', '/api-keys');
    expect(bySession.status).toBe(200);
    expect(bySession.body).toEqual(byKey.body);
    const created = await asUser(gw, s, 'POST', '/api-keys', { body: { name: 'from the dashboard' } });
    expect(created.status).toBe(201);
    expect((await call(gw, 'GET', '/api-keys', { key: String(created.body.token) })).status).toBe(200);
    const invalid = await asUser(gw, s, 'POST', '/api-keys', { body: {} });
    expect(invalid.body).toEqual((await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: {} })).body);
    // A request with a key is the key's, whatever cookie comes with it.
    const other = await gw.createTeam();
    const withKey = await call(gw, 'GET', '/api-keys', { key: other.apiKey, headers: { cookie: s.cookie } });
    expect((withKey.body.data as { id: string }[]).map((k) => k.id)).toEqual([other.keyId]);
    expect((await call(gw, 'GET', '/api-keys')).body.name).toBe('missing_api_key');
  });

  it('wants the session’s CSRF header and, when sent, the site’s Origin', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'admin']]);
    const s = await signIn(gw, user.email);
    const none = await call(gw, 'GET', '/api-keys', { headers: { cookie: s.cookie } });
    expect(none.status).toBe(403);
    expect(none.body.name).toBe('invalid_csrf_token');
    const wrong = await asUser(gw, s, 'POST', '/api-keys', {
      body: { name: 'x' },
      headers: { 'x-csrf-token': 'a'.repeat(64) },
    });
    expect(wrong.status).toBe(403);
    const elsewhere = await asUser(gw, s, 'POST', '/api-keys', {
      body: { name: 'x' },
      headers: { origin: 'https://evil.test' },
    });
    expect(elsewhere.status).toBe(403);
    const count = await gw.db.selectFrom('api_keys').select('id').where('team_id', '=', team.teamId).execute();
    expect(count).toHaveLength(1);
    // Another session's token does not fit this one.
    const t = await signIn(gw, user.email);
    expect((await asUser(gw, { ...s, csrf: t.csrf }, 'GET', '/api-keys')).status).toBe(403);
    // Without an Origin header (not a browser's cross-site request) the CSRF header suffices.
    const noOrigin = await call(gw, 'GET', '/api-keys', { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(noOrigin.status).toBe(200);
  });

  it('gives a member everything but API keys', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'member']]);
    const s = await signIn(gw, user.email);
    const keys = await asUser(gw, s, 'GET', '/api-keys');
    expect(keys.status).toBe(403);
    expect(keys.body.name).toBe('invalid_permission');
    expect((await asUser(gw, s, 'DELETE', `/api-keys/${team.keyId}`)).status).toBe(403);
    expect((await asUser(gw, s, 'GET', '/logs')).status).toBe(200);
  });

  it('acts on the current team, switched by the team switcher; another team’s ids stay 404', async () => {
    const a = await gw.createTeam();
    const b = await gw.createTeam();
    const c = await gw.createTeam();
    const user = await createUser(gw, [
      [a.teamId, 'admin'],
      [b.teamId, 'admin'],
    ]);
    const s = await signIn(gw, user.email);
    expect((s.body.team as { id: string }).id).toBe(a.teamId);
    expect((await asUser(gw, s, 'DELETE', `/api-keys/${b.keyId}`)).status).toBe(404);
    expect((await asUser(gw, s, 'PUT', '/dashboard-api/session/team', { body: { team_id: c.teamId } })).status).toBe(
      404,
    );
    const switched = await asUser(gw, s, 'PUT', '/dashboard-api/session/team', { body: { team_id: b.teamId } });
    expect(switched.status).toBe(200);
    expect((switched.body.team as { id: string }).id).toBe(b.teamId);
    expect((await asUser(gw, s, 'DELETE', `/api-keys/${a.keyId}`)).status).toBe(404);
    expect((await asUser(gw, s, 'DELETE', `/api-keys/${b.keyId}`)).status).toBe(200);
    // Signing in straight into a team.
    const direct = await signIn(gw, user.email, PASSWORD, b.teamId);
    expect((direct.body.team as { id: string }).id).toBe(b.teamId);
  });

  it('tells a disabled team’s members that its access is off', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'admin']]);
    const s = await signIn(gw, user.email);
    await setTeamAccess(gw.db, team.teamId, false);
    const r = await asUser(gw, s, 'GET', '/logs');
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      statusCode: 403,
      name: 'team_access_disabled',
      message: 'Access is disabled for this team.',
    });
    const current = await asUser(gw, s, 'GET', '/dashboard-api/session');
    expect(current.body.team).toMatchObject({ id: team.teamId, access_enabled: false });
  });
});

describe('sign-in limits', () => {
  it('locks an account after repeated failures, existing or not, even for the right password', async () => {
    const team = await gw.createTeam();
    const user = await createUser(gw, [[team.teamId, 'admin']]);
    for (const email of [user.email, 'ghost@example.com']) {
      for (let i = 0; i < 5; i++) {
        const r = await call(gw, 'POST', '/dashboard-api/session', { body: { email, password: 'wrong' } });
        expect(r.status).toBe(401);
      }
      const locked = await call(gw, 'POST', '/dashboard-api/session', { body: { email, password: PASSWORD } });
      expect(locked.status).toBe(429);
      expect(locked.body.name).toBe('rate_limit_exceeded');
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    }
    // Another account is not locked by it.
    const other = await createUser(gw, [[team.teamId, 'admin']]);
    await signIn(gw, other.email);
  });

  it('limits the attempts from one address', async () => {
    const limited = await startGateway({ env: { SIGN_IN_ATTEMPTS_PER_ADDRESS: '3' } });
    try {
      const body = { email: 'someone@example.com', password: 'wrong' };
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await call(limited, 'POST', '/dashboard-api/session', { body })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      // A client's own X-Forwarded-For changes nothing: no proxy is trusted to have written it.
      const other = await call(limited, 'POST', '/dashboard-api/session', {
        body: { ...body, email: 'else@example.com' },
        headers: { 'x-forwarded-for': '198.51.100.9' },
      });
      expect(other.status).toBe(429);
    } finally {
      await limited.stop();
    }
  });

  it('behind a trusted proxy, limits the address the proxy saw, not the proxy', async () => {
    const proxied = await startGateway({ env: { SIGN_IN_ATTEMPTS_PER_ADDRESS: '2', TRUSTED_PROXY_HOPS: '1' } });
    try {
      const body = { email: 'someone@example.com', password: 'wrong' };
      const from = (client: string) =>
        call(proxied, 'POST', '/dashboard-api/session', { body, headers: { 'x-forwarded-for': client } });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await from('198.51.100.7')).status);
      expect(statuses).toEqual([401, 401, 429]);
      // Another visitor through the same proxy (the same peer) is not refused.
      expect((await from('198.51.100.8')).status).toBe(401);
      // What the client put before the proxy's own entry is not trusted: the proxy's entry counts.
      expect((await from('203.0.113.1, 198.51.100.7')).status).toBe(429);
    } finally {
      await proxied.stop();
    }
  });
});
