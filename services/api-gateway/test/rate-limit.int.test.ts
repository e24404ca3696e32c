import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nextSecond } from '@postline/testing';
import { call, startGateway, type Gateway } from './harness.ts';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway({ rateLimitPerSecond: 5 });
});
afterAll(async () => {
  await gw.stop();
});

async function burst(key: string, n: number) {
  return Promise.all(Array.from({ length: n }, () => call(gw, 'GET', '/api-keys', { key })));
}

async function burstInOneWindow(key: string, n: number) {
  await nextSecond();
  return burst(key, n);
}

describe('rate limiting per team per second', () => {
  it('sets the ratelimit headers on every response', async () => {
    const team = await gw.createTeam();
    await nextSecond();
    const r = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    expect(r.status).toBe(200);
    expect(r.headers.get('ratelimit-limit')).toBe('5');
    expect(r.headers.get('ratelimit-remaining')).toBe('4');
    expect(r.headers.get('ratelimit-reset')).toBe('1');
    expect(r.headers.get('ratelimit-policy')).toBe('5;w=1');
    // Also on errors answered after authentication.
    const missing = await call(gw, 'GET', '/logs/not-a-uuid', { key: team.apiKey });
    expect(missing.status).toBe(422);
    expect(missing.headers.get('ratelimit-limit')).toBe('5');
  });

  it('answers 429 rate_limit_exceeded with retry-after past the default limit, per team', async () => {
    const a = await gw.createTeam();
    const b = await gw.createTeam();
    const answers = await burstInOneWindow(a.apiKey, 8);
    const limited = answers.filter((r) => r.status === 429);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
    expect(limited).toHaveLength(3);
    for (const r of limited) {
      expect(r.body).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.headers.get('ratelimit-remaining')).toBe('0');
    }
    // Another team has its own budget in the same second.
    expect((await call(gw, 'GET', '/api-keys', { key: b.apiKey })).status).toBe(200);
  });

  it('shares the budget across the keys of one team', async () => {
    const team = await gw.createTeam();
    const second = await gw.createKey(team.teamId, 'full_access');
    await nextSecond();
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, () => call(gw, 'GET', '/api-keys', { key: team.apiKey })),
      ...Array.from({ length: 4 }, () => call(gw, 'GET', '/api-keys', { key: second.apiKey })),
    ]);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(3);
  });

  it('applies a per-team override', async () => {
    const team = await gw.createTeam({ rateLimit: 2 });
    const answers = await burstInOneWindow(team.apiKey, 4);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(2);
    expect(answers[0]?.headers.get('ratelimit-limit')).toBe('2');
  });

  it('lets requests through again in the next second', async () => {
    const team = await gw.createTeam({ rateLimit: 1 });
    await burst(team.apiKey, 3);
    await nextSecond();
    expect((await call(gw, 'GET', '/api-keys', { key: team.apiKey })).status).toBe(200);
  });
});

describe('rate-limit headers on refusals by authentication', () => {
  it('shows the default limit, whole, on 401 and 403 answers, which are counted against no team', async () => {
    const team = await gw.createTeam();
    const sendingOnly = await gw.createKey(team.teamId, 'sending_access');
    await nextSecond();
    const refused = [
      await call(gw, 'GET', '/api-keys'),
      await call(gw, 'GET', '/api-keys', { key: 're_unknown_key' }),
      await call(gw, 'GET', '/api-keys', { key: sendingOnly.apiKey }),
    ];
    expect(refused.map((r) => [r.status, r.body.name])).toEqual([
      [401, 'missing_api_key'],
      [403, 'invalid_api_key'],
      [401, 'restricted_api_key'],
    ]);
    for (const r of refused) {
      expect(r.headers.get('ratelimit-limit')).toBe('5');
      expect(r.headers.get('ratelimit-remaining')).toBe('5');
      expect(r.headers.get('ratelimit-reset')).toBe('1');
      expect(r.headers.get('ratelimit-policy')).toBe('5;w=1');
    }
    const listed = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    expect(listed.headers.get('ratelimit-remaining')).toBe('4');
  });
});
