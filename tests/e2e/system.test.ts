import { beforeAll, describe, expect, it } from '@jest/globals';
import { SERVICE_NAMES } from '@postline/contracts';
import { type SharedSystem, testResend, useSystem, waitFor } from '@postline/testing';

// The run's shared system (tests/e2e/restarts.test.ts stops a service of a system of its own).
let system: SharedSystem;
const world = useSystem();
beforeAll(() => {
  ({ system } = world);
});

async function call(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

describe('the whole system', () => {
  it('runs six services, each healthy, ready and exposing metrics', async () => {
    for (const name of SERVICE_NAMES) {
      const s = system.services[name];
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${s.url}/readyz`);
      expect({ name, status: ready.status }).toEqual({ name, status: 200 });
      expect(await (await fetch(`${s.url}/metrics`)).text()).toContain('process_cpu_seconds_total');
    }
  });

  it('creates a team with the admin CLI whose key works with the resend SDK', async () => {
    const created = await system.admin('team', 'create', '--name', 'Acme');
    expect(created.team_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.api_key).toMatch(/^pl_/);
    const resend = testResend(created.api_key, system.apiUrl);
    const keys = await resend.apiKeys.list();
    expect(keys.error).toBeNull();
    expect(keys.data?.data).toHaveLength(1);

    await system.admin('team', 'set-rate-limit', '--team', String(created.team_id), '--per-second', '7');
    // The gateways learn of the change through Postgres's NOTIFY, a moment after the command's commit.
    await waitFor(
      'the new rate limit',
      async () => (await call('GET', '/api-keys', String(created.api_key))).headers.get('ratelimit-limit') === '7',
    );
    const limited = await call('GET', '/api-keys', String(created.api_key));
    expect(limited.headers.get('ratelimit-limit')).toBe('7');

    await system.admin('team', 'disable', '--team', String(created.team_id));
    await waitFor("the disabled team's key refused", async () => (await resend.apiKeys.list()).error !== null);
    const denied = await resend.apiKeys.list();
    expect(denied.error?.name).toBe('invalid_api_key');
  });

  it('forwards each resource family to its owner with the team attached', async () => {
    const { api_key: key } = await system.admin('team', 'create', '--name', 'Forward');
    // Owners without their routes yet answer with their own 404 (not the gateway's 503), which shows the
    // request reached them and passed their trusted-team check.
    for (const [path, owner] of [
      ['/domains/0190a6f4-8b4a-7000-8000-000000000000', 'domain-verifier'],
      ['/webhooks/0190a6f4-8b4a-7000-8000-000000000000', 'webhook-dispatcher'],
      ['/emails/receiving/0190a6f4-8b4a-7000-8000-000000000000', 'inbound-smtp'],
      ['/contacts/0190a6f4-8b4a-7000-8000-000000000000', 'sender'],
    ] as const) {
      const r = await call('GET', path, String(key));
      expect({ path, status: r.status, name: (JSON.parse(r.text) as { name: string }).name }).toEqual({
        path,
        status: 404,
        name: 'not_found',
      });
      // Straight to the owner, without the gateway's team header: refused.
      const direct = await fetch(`${system.services[owner].url}${path}`);
      expect(direct.status).toBe(401);
    }
  });

  it('replays an idempotent POST /emails byte for byte and refuses another body with the same key', async () => {
    const { api_key: key } = await system.admin('team', 'create', '--name', 'Idem');
    const body = { from: 'a@example.com', to: ['b@example.com'], subject: 'hi', html: '<p>hi</p>' };
    const first = await call('POST', '/emails', String(key), body, { 'idempotency-key': 'order-1' });
    const replay = await call(
      'POST',
      '/emails',
      String(key),
      { html: '<p>hi</p>', subject: 'hi', to: ['b@example.com'], from: 'a@example.com' },
      { 'idempotency-key': 'order-1' },
    );
    expect(replay.status).toBe(first.status);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const other = await call(
      'POST',
      '/emails',
      String(key),
      { ...body, subject: 'other' },
      { 'idempotency-key': 'order-1' },
    );
    expect(other.status).toBe(409);
    expect(JSON.parse(other.text)).toMatchObject({ name: 'invalid_idempotent_request' });
    // Keys are per team: another team's same key is a new request.
    const { api_key: otherTeam } = await system.admin('team', 'create', '--name', 'Idem2');
    const fresh = await call(
      'POST',
      '/emails',
      String(otherTeam),
      { ...body, subject: 'other' },
      { 'idempotency-key': 'order-1' },
    );
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    const tooLong = await call('POST', '/emails', String(key), body, { 'idempotency-key': 'k'.repeat(257) });
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.text)).toMatchObject({ name: 'invalid_idempotency_key' });
  });
});
