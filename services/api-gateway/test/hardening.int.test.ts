// gateway hardening: each `it` states the behaviour the reference requires. Failing ones demonstrate bugs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { waitFor } from '@postline/testing';
import { call, startGateway, type Gateway } from './harness.ts';

type Seen = { method: string; url: string; body: string };

/** A fake owner over a real socket: records what reaches it, answers 200 {id} after `delayMs`. */
async function fakeOwner(delayMs = 0) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: `owner-${seen.length}` }));
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A request whose path is sent byte for byte (fetch would normalise `..`). */
function rawRequest(
  gw: Gateway,
  method: string,
  path: string,
  key: string,
  body?: string,
): Promise<{ status: number; body: string }> {
  const u = new URL(gw.url);
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined)
    Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let owner: Awaited<ReturnType<typeof fakeOwner>>;
let gw: Gateway;
beforeAll(async () => {
  owner = await fakeOwner(400);
  gw = await startGateway({
    owners: { sender: owner.url, 'domain-verifier': owner.url, 'webhook-dispatcher': owner.url },
  });
});
afterAll(async () => {
  await gw.stop();
  await owner.close();
});

describe('client mistakes are never a 500', () => {
  it('non-object JSON bodies and empty JSON bodies on POST/DELETE /api-keys are 4xx', async () => {
    const team = await gw.createTeam();
    for (const raw of ['[]', '"str"', 'null', '', '{']) {
      const r = await call(gw, 'POST', '/api-keys', { key: team.apiKey, raw });
      expect([raw, r.status < 500 && r.status >= 400]).toEqual([raw, true]);
      expect(typeof r.body.name).toBe('string');
    }
    const del = await call(gw, 'DELETE', '/api-keys/0190a6f4-8b4a-7000-8000-000000000000', {
      key: team.apiKey,
      raw: '',
    });
    expect(del.status).toBe(404);
  });

  it('odd and repeated query parameters on lists are 422 validation_error', async () => {
    const team = await gw.createTeam();
    for (const q of [
      'limit=1&limit=2',
      'limit=abc',
      'after=x&after=y',
      'limit=',
      'after[]=1',
      `after=${'0'.repeat(5000)}`,
    ]) {
      const r = await call(gw, 'GET', `/api-keys?${q}`, { key: team.apiKey });
      expect([q, r.status]).toEqual([q, r.status < 500 ? r.status : 'server error']);
    }
  });

  it('a NUL character in an API key name is 422, not 500', async () => {
    const team = await gw.createTeam();
    const r = await call(gw, 'POST', '/api-keys', { key: team.apiKey, raw: '{"name":"a\\u0000b"}' });
    expect(r.status).toBe(422);
  });

  it('a GET that carries a JSON body is forwarded (body ignored), not answered 503', async () => {
    const team = await gw.createTeam();
    const r = await rawRequest(gw, 'GET', '/domains', team.apiKey, '{"a":1}');
    expect(r).toMatchObject({ status: 200 });
  });
});

describe('request logs', () => {
  it('one body Postgres jsonb refuses (\\u0000 or a lone surrogate) does not stop logging for everyone', async () => {
    const own = await startGateway();
    try {
      const a = await own.createTeam();
      const b = await own.createTeam();
      // Refused for the caller (422), and still logged with its body, which jsonb cannot hold.
      const poison = await call(own, 'POST', '/api-keys', { key: a.apiKey, raw: '{"name":"\\ud800"}' });
      expect(poison.status).toBe(422);
      await own.flush();
      await call(own, 'GET', '/api-keys', { key: b.apiKey });
      await own.flush();
      const logs = await call(own, 'GET', '/logs', { key: b.apiKey });
      expect((logs.body.data as unknown[]).length).toBeGreaterThan(0);
    } finally {
      await own.stop();
    }
  });
});

describe('request log bounds', () => {
  it('bounds wide objects as the scrubber promises ("deep or wide structures bounded")', async () => {
    const team = await gw.createTeam();
    const wide: Record<string, string> = { name: 'wide' };
    for (let i = 0; i < 5000; i++) wide[`k${i}`] = 'v';
    await call(gw, 'POST', '/api-keys', { key: team.apiKey, body: wide });
    await gw.flush();
    const row = await gw.db
      .selectFrom('request_logs')
      .select('request_body')
      .where('team_id', '=', team.teamId)
      .executeTakeFirstOrThrow();
    expect(Object.keys(row.request_body as object).length).toBeLessThanOrEqual(101);
  });
});

describe('owner routing', () => {
  it('dot segments cannot steer a request to an owner path outside its family', async () => {
    const team = await gw.createTeam();
    const before = owner.seen.length;
    await rawRequest(gw, 'GET', '/emails/../metrics', team.apiKey);
    await rawRequest(gw, 'GET', '/domains/%2e%2e/healthz', team.apiKey);
    const reached = owner.seen.slice(before).map((s) => s.url);
    expect(reached.filter((u) => !/^\/(emails|domains)(\/|$|\?)/.test(u))).toEqual([]);
  });
});

describe('idempotency', () => {
  it('a client that times out and retries with the same key does not get the email forwarded twice', async () => {
    const team = await gw.createTeam();
    const body = { from: 'a@example.com', to: 'b@example.com', subject: 'once', html: 'x' };
    const before = owner.seen.length;
    const ac = new AbortController();
    const first = fetch(`${gw.url}/emails`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${team.apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': 'retry-after-timeout',
      },
      body: JSON.stringify(body),
      signal: ac.signal,
    }).catch(() => undefined);
    const forwardedOnce = () => owner.seen.slice(before).some((s) => s.body.includes('"once"'));
    await waitFor('the owner to get the first request', forwardedOnce); // and work on it for 400 ms
    const abandonedBefore = gw.abandonedRequests();
    ac.abort();
    await first;
    await waitFor('the gateway to see the client go', () => gw.abandonedRequests() > abandonedBefore);
    const retry = await call(gw, 'POST', '/emails', {
      key: team.apiKey,
      body,
      headers: { 'idempotency-key': 'retry-after-timeout' },
    });
    await waitFor('the first answer to be stored', async () => {
      const row = await gw.db
        .selectFrom('idempotency_keys')
        .select('state')
        .where('team_id', '=', team.teamId)
        .where('key', '=', 'retry-after-timeout')
        .executeTakeFirst();
      return row?.state === 'done';
    });
    const forwarded = owner.seen.slice(before).filter((s) => s.body.includes('"once"')).length;
    // Either 409 concurrent_idempotent_requests or a replay; never a second send.
    expect({ forwarded, status: retry.status }).toEqual({ forwarded: 1, status: retry.status === 200 ? 200 : 409 });
    // And the first answer is kept for the next retry.
    const third = await call(gw, 'POST', '/emails', {
      key: team.apiKey,
      body,
      headers: { 'idempotency-key': 'retry-after-timeout' },
    });
    expect(third.headers.get('idempotent-replayed')).toBe('true');
  });

  it('POST /emails/ (trailing slash, which owners route to POST /emails) is idempotent too', async () => {
    const team = await gw.createTeam();
    const body = { from: 'a@example.com', to: 'b@example.com', subject: 'slash', html: 'x' };
    const before = owner.seen.length;
    await call(gw, 'POST', '/emails/', { key: team.apiKey, body, headers: { 'idempotency-key': 'slash' } });
    const again = await call(gw, 'POST', '/emails/', {
      key: team.apiKey,
      body,
      headers: { 'idempotency-key': 'slash' },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(owner.seen.slice(before).filter((s) => s.body.includes('"slash"'))).toHaveLength(1);
  });

  it('concurrent requests with one key forward exactly once', async () => {
    const team = await gw.createTeam();
    const body = { from: 'a@example.com', to: 'b@example.com', subject: 'race', html: 'x' };
    const before = owner.seen.length;
    const rs = await Promise.all(
      Array.from({ length: 8 }, () =>
        call(gw, 'POST', '/emails', { key: team.apiKey, body, headers: { 'idempotency-key': 'race' } }),
      ),
    );
    expect(owner.seen.slice(before).filter((s) => s.body.includes('"race"'))).toHaveLength(1);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
  });
});

describe('rate limit', () => {
  it('never lets more than the limit through in one window under concurrency', async () => {
    const team = await gw.createTeam({ rateLimit: 5 });
    const rs = await Promise.all(Array.from({ length: 30 }, () => call(gw, 'GET', '/api-keys', { key: team.apiKey })));
    const ok = rs.filter((r) => r.status === 200).length;
    expect(ok).toBeLessThanOrEqual(10); // at most two windows if the burst straddles a second
    const limited = rs.find((r) => r.status === 429);
    expect(limited?.body.name).toBe('rate_limit_exceeded');
    expect(limited?.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
