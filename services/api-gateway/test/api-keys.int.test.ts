import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testResend, waitFor } from '@postline/testing';
import { call, startGateway, type Gateway } from './harness.ts';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw.stop();
});

describe('/api-keys', () => {
  it('creates a key shown once, stored only as a hash, that authenticates', async () => {
    const team = await gw.createTeam();
    const r = await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: 'Production' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['id', 'token']);
    const token = String(r.body.token);
    expect(token).toMatch(/^pl_[A-Za-z0-9_-]{40,}$/);
    const stored = await gw.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', String(r.body.id))
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(token.slice(3));
    expect(stored.permission).toBe('full_access');
    expect((await call(gw, 'GET', '/api-keys', { key: token })).status).toBe(200);
  });

  it('validates the body with named errors and writes nothing on failure', async () => {
    const team = await gw.createTeam();
    const missing = await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ name: 'missing_required_field', message: 'Missing `name` field.' });
    const long = await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: 'x'.repeat(51) } });
    expect(long.status).toBe(422);
    expect(long.body.name).toBe('validation_error');
    const access = await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: 'a', permission: 'admin' } });
    expect(access.status).toBe(422);
    expect(access.body.name).toBe('invalid_access');
    const domainOnFull = await call(gw, 'POST', '/api-keys', {
      key: team.apiKey,
      body: { name: 'a', permission: 'full_access', domain_id: '0190a6f4-8b4a-7000-8000-000000000000' },
    });
    expect(domainOnFull.status).toBe(422);
    const count = await gw.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('team_id', '=', team.teamId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it('creates a sending_access key that can only send', async () => {
    const team = await gw.createTeam();
    const r = await call(gw, 'POST', '/api-keys', {
      key: team.apiKey,
      body: { name: 'sender', permission: 'sending_access' },
    });
    expect(r.status).toBe(201);
    const denied = await call(gw, 'GET', '/api-keys', { key: String(r.body.token) });
    expect(denied.body.name).toBe('restricted_api_key');
  });

  it('renames and deletes, answering the reference shapes; another team sees 404', async () => {
    const a = await gw.createTeam();
    const b = await gw.createTeam();
    const created = await call(gw, 'POST', '/api-keys', { key: a.apiKey, body: { name: 'old' } });
    const id = String(created.body.id);
    expect((await call(gw, 'PATCH', `/api-keys/${id}`, { key: b.apiKey, body: { name: 'x' } })).status).toBe(404);
    expect((await call(gw, 'DELETE', `/api-keys/${id}`, { key: b.apiKey })).status).toBe(404);
    const renamed = await call(gw, 'PATCH', `/api-keys/${id}`, { key: a.apiKey, body: { name: 'new' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ object: 'api_key', id });
    const list = await call(gw, 'GET', '/api-keys', { key: a.apiKey });
    expect((list.body.data as { id: string; name: string }[]).find((k) => k.id === id)?.name).toBe('new');
    const deleted = await call(gw, 'DELETE', `/api-keys/${id}`, { key: a.apiKey });
    expect(deleted.body).toEqual({ object: 'api_key', id, deleted: true });
    const again = await call(gw, 'DELETE', `/api-keys/${id}`, { key: a.apiKey });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ statusCode: 404, name: 'not_found', message: 'API key not found' });
    expect((await call(gw, 'DELETE', '/api-keys/not-a-uuid', { key: a.apiKey })).status).toBe(404);
  });

  it('works with the official resend SDK', async () => {
    const team = await gw.createTeam();
    const resend = testResend(team.apiKey, gw.url);
    const created = await resend.apiKeys.create({ name: 'sdk key', permission: 'sending_access' });
    expect(created.error).toBeNull();
    expect(created.data?.token).toMatch(/^pl_/);
    const list = await resend.apiKeys.list();
    expect(list.error).toBeNull();
    expect(list.data?.data.map((k) => k.name)).toContain('sdk key');
    const removed = await resend.apiKeys.remove(created.data?.id ?? '');
    expect(removed.error).toBeNull();
    const missing = await resend.apiKeys.remove(created.data?.id ?? '');
    expect(missing.error?.name).toBe('not_found');
    const denied = await testResend('pl_wrong', gw.url).apiKeys.list();
    expect(denied.error?.name).toBe('invalid_api_key');
  });
});

describe('expiry and the fields the dashboard lists', () => {
  it('lists permission, domain scope and expiry beside name and times', async () => {
    const team = await gw.createTeam();
    const expiresAt = new Date(Date.now() + 30 * 86_400_000);
    const created = await call(gw, 'POST', '/api-keys', {
      key: team.apiKey,
      body: { name: 'expiring', permission: 'sending_access', expires_at: expiresAt.toISOString() },
    });
    expect(created.status).toBe(201);
    const list = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    const items = list.body.data as Record<string, unknown>[];
    expect(items.find((k) => k.id === created.body.id)).toEqual({
      id: created.body.id,
      name: 'expiring',
      created_at: expect.any(String),
      last_used_at: null,
      permission: 'sending_access',
      domain_id: null,
      expires_at: expect.any(String),
    });
    const expiring = items.find((k) => k.id === created.body.id)!;
    expect(new Date(String(expiring.expires_at).replace(' ', 'T').replace(/\+00$/, 'Z')).getTime()).toBe(
      expiresAt.getTime(),
    );
    expect(items.find((k) => k.id === team.keyId)).toMatchObject({ permission: 'full_access', expires_at: null });
  });

  it('refuses an expiry that is past or not a time with 422, creating nothing', async () => {
    const team = await gw.createTeam();
    for (const expires_at of [new Date(Date.now() - 1000).toISOString(), 'tomorrow', '2027-13-01T00:00:00Z', 5]) {
      const r = await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: 'x', expires_at } });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    }
    const list = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    expect((list.body.data as unknown[]).length).toBe(1);
  });

  it('refuses an expired key with 403 invalid_api_key', async () => {
    const team = await gw.createTeam();
    const created = await call(gw, 'POST', '/api-keys', {
      key: team.apiKey,
      body: { name: 'short-lived', expires_at: new Date(Date.now() + 3_600_000).toISOString() },
    });
    const token = String(created.body.token);
    expect((await call(gw, 'GET', '/api-keys', { key: token })).status).toBe(200);
    // Its hour has passed (the key-change notification drops the cached key).
    await gw.db
      .updateTable('api_keys')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', String(created.body.id))
      .execute();
    await waitFor(
      'the expired key refused',
      async () => (await call(gw, 'GET', '/api-keys', { key: token })).status === 403,
    );
    const refused = await call(gw, 'GET', '/api-keys', { key: token });
    expect(refused.body).toEqual({ statusCode: 403, name: 'invalid_api_key', message: 'API key has expired' });
  });
});

describe('pagination', () => {
  it('pages newest first with after/before cursors and refuses bad parameters with 422', async () => {
    const team = await gw.createTeam();
    for (let i = 0; i < 4; i++) await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: { name: `k${i}` } });
    const all = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    expect(all.body).toMatchObject({ object: 'list', has_more: false });
    const names = (all.body.data as { name: string }[]).map((k) => k.name);
    expect(names).toEqual(['k3', 'k2', 'k1', 'k0', 'test']);

    const first = await call(gw, 'GET', '/api-keys?limit=2', { key: team.apiKey });
    expect(first.body.has_more).toBe(true);
    const firstIds = (first.body.data as { id: string }[]).map((k) => k.id);
    const second = await call(gw, 'GET', `/api-keys?limit=2&after=${firstIds[1]}`, { key: team.apiKey });
    expect((second.body.data as { name: string }[]).map((k) => k.name)).toEqual(['k1', 'k0']);
    expect(second.body.has_more).toBe(true);
    const secondIds = (second.body.data as { id: string }[]).map((k) => k.id);
    const back = await call(gw, 'GET', `/api-keys?limit=2&before=${secondIds[0]}`, { key: team.apiKey });
    expect((back.body.data as { id: string }[]).map((k) => k.id)).toEqual(firstIds);

    for (const q of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=1.5',
      'after=nope',
      `after=${firstIds[0]}&before=${firstIds[1]}`,
    ]) {
      const r = await call(gw, 'GET', `/api-keys?${q}`, { key: team.apiKey });
      expect(r.status).toBe(422);
      expect(r.body.name).toBe('validation_error');
    }
  });
});
