import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
      'created_at',
      'endpoint',
      'id',
      'method',
      'response_status',
      'user_agent',
    ]);

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
