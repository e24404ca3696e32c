import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '@postline/testing';
import { call, startGateway, type Gateway } from './harness.ts';

const LIMIT = 7;
let gw: Gateway;
beforeAll(async () => {
  // Redis is unreachable: nothing listens on this port.
  gw = await startGateway({ redisUrl: `redis://127.0.0.1:${await freePort()}`, rateLimitPerSecond: LIMIT });
});
afterAll(async () => {
  await gw.stop();
});

describe('with Redis down', () => {
  it('reports not ready on /readyz while still alive on /healthz', async () => {
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, checks: { postgres: true, redis: false } });
  });

  it('keeps serving requests, with rate-limit headers that count each alone (counters may be lost, requests may not)', async () => {
    const team = await gw.createTeam();
    for (let i = 0; i < 2; i++) {
      const r = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      expect(r.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 1));
      expect(r.headers.get('ratelimit-reset')).toBe('1');
      expect(r.headers.get('ratelimit-policy')).toBe(`${LIMIT};w=1`);
    }
  });
});
