import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { asUser, createUser, signIn } from './accounts-harness.ts';
import { call, startGateway, type Gateway } from './harness.ts';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw.stop();
});

type LogItem = {
  id: string;
  endpoint: string;
  method: string;
  response_status: number;
  user_agent: string | null;
  created_at: string;
  api_key: { id: string; name: string | null } | null;
  user: { id: string; email: string | null } | null;
};

describe('/logs', () => {
  it('records every API request with scrubbed bodies, newest first', async () => {
    const team = await gw.createTeam();
    const created = await call(gw, 'POST', '/api-keys', {
      key: team.apiKey,
      body: { name: 'logged' },
      headers: { 'user-agent': 'test-agent/1' },
    });
    const token = String(created.body.token);
    await call(gw, 'GET', '/nope', { key: team.apiKey });
    await gw.flush();

    const list = await call(gw, 'GET', '/logs', { key: team.apiKey });
    expect(list.status).toBe(200);
    const items = list.body.data as LogItem[];
    expect(items.map((l) => `${l.method} ${l.endpoint} ${l.response_status}`)).toEqual([
      'GET /nope 404',
      'POST /api-keys 201',
    ]);
    expect(items[1]).toMatchObject({ user_agent: 'test-agent/1' });
    expect(Object.keys(items[0] ?? {}).sort()).toEqual([
      'api_key',
      'created_at',
      'endpoint',
      'id',
      'method',
      'response_status',
      'user',
      'user_agent',
    ]);
    expect(items[0]).toMatchObject({ api_key: { id: team.keyId, name: 'test' }, user: null });

    const one = await call(gw, 'GET', `/logs/${items[1]?.id}`, { key: team.apiKey });
    expect(one.body).toMatchObject({
      object: 'log',
      endpoint: '/api-keys',
      method: 'POST',
      response_status: 201,
      request_body: { name: 'logged' },
    });
    expect(JSON.stringify(one.body)).not.toContain(token);
    expect((one.body.response_body as { token: string }).token).toBe('[redacted]');
  });

  it("answers 404 for another team's log and 422 for a malformed id", async () => {
    const a = await gw.createTeam();
    const b = await gw.createTeam();
    await call(gw, 'GET', '/api-keys', { key: a.apiKey });
    await gw.flush();
    const list = await call(gw, 'GET', '/logs', { key: a.apiKey });
    const id = (list.body.data as LogItem[])[0]?.id;
    expect((await call(gw, 'GET', `/logs/${id}`, { key: b.apiKey })).status).toBe(404);
    const bad = await call(gw, 'GET', '/logs/xyz', { key: a.apiKey });
    expect(bad.status).toBe(422);
    expect(bad.body.name).toBe('validation_error');
  });

  it('is always paginated (default 20)', async () => {
    const team = await gw.createTeam();
    await Promise.all(Array.from({ length: 22 }, () => call(gw, 'GET', '/api-keys', { key: team.apiKey })));
    await gw.flush();
    const page = await call(gw, 'GET', '/logs', { key: team.apiKey });
    expect((page.body.data as LogItem[]).length).toBe(20);
    expect(page.body.has_more).toBe(true);
  });
});

describe('/logs filters', () => {
  it('narrows by status, method, endpoint, key, user agent and time, and names the key or user', async () => {
    const team = await gw.createTeam();
    const second = await gw.createKey(team.teamId, 'full_access');
    const admin = await createUser(gw, [[team.teamId, 'admin']]);
    const s = await signIn(gw, admin.email);
    const before = new Date();
    await call(gw, 'POST', '/api-keys', {
      key: team.apiKey,
      body: { name: 'a' },
      headers: { 'user-agent': 'Acme-CLI/2' },
    });
    await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: {} });
    await call(gw, 'GET', '/api-keys/', { key: second.apiKey, headers: { 'user-agent': 'curl/8' } });
    await call(gw, 'GET', '/apikeys-nope', { key: second.apiKey });
    await asUser(gw, s, 'GET', '/api-keys', { headers: { 'user-agent': 'Mozilla/5.0 dashboard' } });
    await gw.flush();
    const after = new Date();

    const list = async (query: string) => {
      const r = await call(gw, 'GET', `/logs?${query}`, { key: team.apiKey });
      expect(r.status).toBe(200);
      return (r.body.data as LogItem[]).map((l) => `${l.method} ${l.endpoint} ${l.response_status}`);
    };
    expect(await list('status=422')).toEqual(['POST /api-keys 422']);
    expect(await list('status=4xx')).toEqual(['GET /apikeys-nope 404', 'POST /api-keys 422']);
    expect(await list('status=2xx&method=POST')).toEqual(['POST /api-keys 201']);
    expect(await list('endpoint=/api-keys')).toHaveLength(4);
    expect(await list(`api_key_id=${second.keyId}`)).toEqual(['GET /apikeys-nope 404', 'GET /api-keys/ 200']);
    expect(await list('user_agent=acme')).toEqual(['POST /api-keys 201']);
    // (`/api`: not the /logs reads themselves, which are logged too.)
    expect(await list(`endpoint=/api&created_after=${after.toISOString()}`)).toEqual([]);
    expect(await list(`endpoint=/api&created_before=${before.toISOString()}`)).toEqual([]);
    expect(
      await list(
        `endpoint=/api&created_after=${before.toISOString()}&created_before=${new Date(after.getTime() + 1000).toISOString()}`,
      ),
    ).toHaveLength(5);
    // A LIKE wildcard is a plain character.
    expect(await list('endpoint=/api%25')).toEqual([]);
    expect(await list('user_agent=_')).toEqual([]);

    const bySession = await call(gw, 'GET', '/logs?user_agent=dashboard', { key: team.apiKey });
    expect((bySession.body.data as LogItem[])[0]).toMatchObject({
      api_key: null,
      user: { id: admin.id, email: admin.email },
    });
    const one = await call(gw, 'GET', `/logs/${(bySession.body.data as LogItem[])[0]?.id}`, { key: team.apiKey });
    expect(one.body).toMatchObject({ object: 'log', user: { id: admin.id } });
    // The filters page like the list itself.
    const page = await call(gw, 'GET', '/logs?endpoint=/api-keys&limit=2', { key: team.apiKey });
    expect(page.body.has_more).toBe(true);
    const rest = await call(
      gw,
      'GET',
      `/logs?endpoint=/api-keys&limit=2&after=${(page.body.data as LogItem[])[1]?.id}`,
      {
        key: team.apiKey,
      },
    );
    expect((rest.body.data as LogItem[]).length).toBe(2);
  });

  it('refuses a bad filter with 422 validation_error', async () => {
    const team = await gw.createTeam();
    for (const q of [
      'status=99',
      'status=6xx',
      'status=abc',
      'method=FETCH',
      'endpoint=api-keys',
      'api_key_id=nope',
      'created_after=yesterday',
      'created_before=2026-02-30T00:00:00Z',
      'user_agent=%00',
      'status=200&status=404',
    ]) {
      const r = await call(gw, 'GET', `/logs?${q}`, { key: team.apiKey });
      expect([q, r.status, r.body.name]).toEqual([q, 422, 'validation_error']);
    }
  });
});
