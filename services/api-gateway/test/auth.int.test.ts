import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'kysely';
import { waitFor } from '@postline/testing';
import { call, startGateway, type Gateway } from './harness.ts';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw.stop();
});

describe('authentication', () => {
  it('answers 401 missing_api_key without an Authorization header', async () => {
    const r = await call(gw, 'GET', '/api-keys');
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ statusCode: 401, name: 'missing_api_key' });
    expect(typeof r.body.message).toBe('string');
  });

  it('answers 403 invalid_api_key for an unknown key', async () => {
    const r = await call(gw, 'GET', '/api-keys', { key: 'pl_not_a_real_key' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ statusCode: 403, name: 'invalid_api_key' });
  });

  it('refuses a revoked key with 403', async () => {
    const team = await gw.createTeam();
    const other = await gw.createKey(team.teamId, 'full_access');
    expect((await call(gw, 'DELETE', `/api-keys/${other.keyId}`, { key: team.apiKey })).status).toBe(200);
    const r = await call(gw, 'GET', '/api-keys', { key: other.apiKey });
    expect(r.status).toBe(403);
    expect(r.body.name).toBe('invalid_api_key');
  });

  // Keys are cached in memory; a change made outside this gateway (another replica, the admin CLI, psql)
  // reaches it by NOTIFY within milliseconds, far below the cache's 60 s bound.
  const refusedSoon = (apiKey: string) =>
    waitFor(
      'the key to be refused',
      async () => {
        const r = await call(gw, 'GET', '/api-keys', { key: apiKey });
        return r.status === 403 && r.body.name === 'invalid_api_key';
      },
      2000,
    );

  it('refuses an expired key with 403, also when it was cached before it expired', async () => {
    const team = await gw.createTeam();
    expect((await call(gw, 'GET', '/api-keys', { key: team.apiKey })).status).toBe(200);
    await gw.db
      .updateTable('api_keys')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', team.keyId)
      .execute();
    await refusedSoon(team.apiKey);
  });

  it("refuses a disabled team's keys with 403 once the change is committed anywhere", async () => {
    const team = await gw.createTeam();
    expect((await call(gw, 'GET', '/api-keys', { key: team.apiKey })).status).toBe(200);
    await gw.db.updateTable('teams').set({ access_enabled: false }).where('id', '=', team.teamId).execute();
    await refusedSoon(team.apiKey);
    await gw.db.updateTable('teams').set({ access_enabled: true }).where('id', '=', team.teamId).execute();
    await waitFor(
      'the key to work again',
      async () => (await call(gw, 'GET', '/api-keys', { key: team.apiKey })).status === 200,
      2000,
    );
  });

  it('refuses a key revoked on this gateway at once, though it was cached', async () => {
    const team = await gw.createTeam();
    const other = await gw.createKey(team.teamId, 'full_access');
    expect((await call(gw, 'GET', '/api-keys', { key: other.apiKey })).status).toBe(200);
    expect((await call(gw, 'DELETE', `/api-keys/${other.keyId}`, { key: team.apiKey })).status).toBe(200);
    expect((await call(gw, 'GET', '/api-keys', { key: other.apiKey })).status).toBe(403);
  });

  it('keeps keys in memory: authenticating needs no database read while the cache is current', async () => {
    const team = await gw.createTeam();
    expect((await call(gw, 'GET', '/emails', { key: team.apiKey })).status).toBe(503);
    // Renaming the key table away makes every database lookup fail; the cached key still authenticates.
    await sql`alter table api_keys rename to api_keys_away`.execute(gw.db);
    try {
      const cached = await call(gw, 'GET', '/emails', { key: team.apiKey });
      expect(cached.status).toBe(503); // the owner is unreachable here; authentication passed
      const other = await call(gw, 'GET', '/emails', { key: 'pl_unknown' });
      expect(other.status).toBe(500);
    } finally {
      await sql`alter table api_keys_away rename to api_keys`.execute(gw.db);
    }
  });

  it('restricts a sending_access key to the sending routes with 401 restricted_api_key', async () => {
    const team = await gw.createTeam();
    const sending = await gw.createKey(team.teamId, 'sending_access');
    for (const [method, path] of [
      ['GET', '/api-keys'],
      ['GET', '/emails'],
      ['GET', '/domains'],
      ['GET', '/logs'],
    ] as const) {
      const r = await call(gw, method, path, { key: sending.apiKey });
      expect(r.status).toBe(401);
      expect(r.body.name).toBe('restricted_api_key');
    }
    // It passes authentication on POST /emails (the owner is unreachable in this test: 503).
    const send = await call(gw, 'POST', '/emails', { key: sending.apiKey, body: { to: 'a@b.c' } });
    expect(send.status).toBe(503);
    expect(send.body.name).toBe('service_unavailable');
  });

  it('records last_used_at behind the request', async () => {
    const team = await gw.createTeam();
    await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    await gw.flush();
    const r = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    const item = (r.body.data as { id: string; last_used_at: string | null }[]).find((k) => k.id === team.keyId);
    expect(item?.last_used_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\+00$/);
  });
});

describe('routing edges', () => {
  it('answers /automations with 404 saying it is not available yet', async () => {
    const team = await gw.createTeam();
    for (const [method, path] of [
      ['GET', '/automations'],
      ['POST', '/automations'],
      ['GET', '/automations/abc/runs'],
      ['DELETE', '/automations/abc'],
    ] as const) {
      const r = await call(gw, method, path, { key: team.apiKey, body: method === 'POST' ? {} : undefined });
      expect(r.status).toBe(404);
      expect(r.body.name).toBe('not_found');
      expect(String(r.body.message)).toMatch(/not available yet/);
    }
  });

  it('answers unknown routes with 404 not_found and wrong methods with 405', async () => {
    const team = await gw.createTeam();
    const unknown = await call(gw, 'GET', '/nope', { key: team.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ statusCode: 404, name: 'not_found' });
    const wrong = await call(gw, 'PUT', '/api-keys', { key: team.apiKey, body: {} });
    expect(wrong.status).toBe(405);
    expect(wrong.body).toMatchObject({ statusCode: 405, name: 'method_not_allowed' });
    expect(wrong.headers.get('allow')).toBe('POST, GET');
  });

  it('answers malformed JSON with a named 4xx, never a 500', async () => {
    const team = await gw.createTeam();
    const r = await call(gw, 'POST', '/api-keys', { key: team.apiKey, raw: '{"name": ' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ statusCode: 400, name: 'validation_error' });
  });

  it('answers 503 service_unavailable when the owner of a family is down', async () => {
    const team = await gw.createTeam();
    const r = await call(gw, 'GET', '/domains', { key: team.apiKey });
    expect(r.status).toBe(503);
    expect(r.body.name).toBe('service_unavailable');
  });

  it('serves health, readiness and metrics without a key', async () => {
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, checks: { postgres: true, redis: true } });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('http_request_duration_seconds');
  });
});
