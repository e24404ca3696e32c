import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { claimIdempotencyKey } from '../src/db/idempotency.ts';
import { sql } from 'kysely';
import { IN_FLIGHT_STALE_SECONDS, requestHash } from '../src/domain/idempotency.ts';
import { call, startGateway, type Gateway } from './harness.ts';

let gw: Gateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw.stop();
});

const body = { from: 'a@example.com', to: 'b@example.com', subject: 's', html: '<p>x</p>' };

describe('Idempotency-Key', () => {
  it('refuses keys outside 1–256 characters with 400 invalid_idempotency_key', async () => {
    const team = await gw.createTeam();
    for (const key of ['', 'k'.repeat(257)]) {
      const r = await call(gw, 'POST', '/emails', { key: team.apiKey, body, headers: { 'idempotency-key': key } });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ statusCode: 400, name: 'invalid_idempotency_key' });
    }
  });

  it('answers 409 concurrent_idempotent_requests while the same key is in flight', async () => {
    const team = await gw.createTeam();
    await claimIdempotencyKey(gw.db, {
      teamId: team.teamId,
      key: 'busy',
      requestHash: requestHash('POST', '/emails', body),
      ttlSeconds: 60,
    });
    const r = await call(gw, 'POST', '/emails', { key: team.apiKey, body, headers: { 'idempotency-key': 'busy' } });
    expect(r.status).toBe(409);
    expect(r.body.name).toBe('concurrent_idempotent_requests');
    const other = await call(gw, 'POST', '/emails', {
      key: team.apiKey,
      body: { ...body, subject: 'x' },
      headers: { 'idempotency-key': 'busy' },
    });
    expect(other.status).toBe(409);
    expect(other.body.name).toBe('invalid_idempotent_request');
  });

  it('lets a retry take over a key left in flight past any forward by a gateway that died, and not before', async () => {
    const team = await gw.createTeam();
    const hash = requestHash('POST', '/emails', body);
    for (const key of ['crashed', 'recent'])
      await claimIdempotencyKey(gw.db, { teamId: team.teamId, key, requestHash: hash, ttlSeconds: 60 });
    const backdate = (key: string, seconds: number) =>
      sql`update idempotency_keys set created_at = now() - make_interval(secs => ${seconds}) where team_id = ${team.teamId} and key = ${key}`.execute(
        gw.db,
      );
    await backdate('crashed', IN_FLIGHT_STALE_SECONDS + 1);
    await backdate('recent', IN_FLIGHT_STALE_SECONDS - 10);

    const recent = await call(gw, 'POST', '/emails', {
      key: team.apiKey,
      body,
      headers: { 'idempotency-key': 'recent' },
    });
    expect(recent.body.name).toBe('concurrent_idempotent_requests');
    // Taken over and forwarded: this gateway has no sender to reach, so the retry's own answer is a 503.
    const crashed = await call(gw, 'POST', '/emails', {
      key: team.apiKey,
      body,
      headers: { 'idempotency-key': 'crashed' },
    });
    expect(crashed.status).toBe(503);
  });

  it('releases the key when the owner cannot be reached, so a retry is processed', async () => {
    const team = await gw.createTeam();
    const first = await call(gw, 'POST', '/emails', {
      key: team.apiKey,
      body,
      headers: { 'idempotency-key': 'retry-me' },
    });
    expect(first.status).toBe(503);
    const rows = await gw.db.selectFrom('idempotency_keys').selectAll().where('team_id', '=', team.teamId).execute();
    expect(rows).toHaveLength(0);
    const second = await call(gw, 'POST', '/emails', {
      key: team.apiKey,
      body,
      headers: { 'idempotency-key': 'retry-me' },
    });
    expect(second.status).toBe(503);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
  });

  it('applies only to POST /emails and /emails/batch', async () => {
    const team = await gw.createTeam();
    const r = await call(gw, 'POST', '/api-keys', {
      key: team.apiKey,
      body: { name: 'a' },
      headers: { 'idempotency-key': 'x' },
    });
    expect(r.status).toBe(201);
    const again = await call(gw, 'POST', '/api-keys', {
      key: team.apiKey,
      body: { name: 'a' },
      headers: { 'idempotency-key': 'x' },
    });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(r.body.id);
  });
});

describe('Idempotency-Key with an owner that answers', () => {
  const seen: http.IncomingHttpHeaders[] = [];
  const owner = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: `owner-${seen.length}` }));
    });
  });
  let withOwner: Gateway;
  beforeAll(async () => {
    await new Promise<void>((r) => owner.listen(0, '127.0.0.1', r));
    withOwner = await startGateway({ owners: { sender: `http://127.0.0.1:${(owner.address() as AddressInfo).port}` } });
  });
  afterAll(async () => {
    await withOwner.stop();
    await new Promise<void>((r) => owner.close(() => r()));
  });

  it('forwards the key with its hash of the request, so that the owner can refuse the key for another request', async () => {
    const team = await withOwner.createTeam();
    await call(withOwner, 'POST', '/emails', { key: team.apiKey, body, headers: { 'idempotency-key': 'with-hash' } });
    await call(withOwner, 'POST', '/emails', { key: team.apiKey, body });
    expect(seen.slice(-2).map((h) => [h['x-postline-idempotency-key'], h['x-postline-idempotency-hash']])).toEqual([
      ['with-hash', requestHash('POST', '/emails', body)],
      [undefined, undefined],
    ]);
  });

  it('takes a batch in permissive mode for another request than the same batch in strict mode', async () => {
    const team = await withOwner.createTeam();
    const batch = [body];
    const strict = await call(withOwner, 'POST', '/emails/batch', {
      key: team.apiKey,
      body: batch,
      headers: { 'idempotency-key': 'modes' },
    });
    expect(strict.status).toBe(200);
    const again = await call(withOwner, 'POST', '/emails/batch', {
      key: team.apiKey,
      body: batch,
      headers: { 'idempotency-key': 'modes', 'x-batch-validation': 'strict' },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const permissive = await call(withOwner, 'POST', '/emails/batch', {
      key: team.apiKey,
      body: batch,
      headers: { 'idempotency-key': 'modes', 'x-batch-validation': 'permissive' },
    });
    expect(permissive.status).toBe(409);
    expect(permissive.body.name).toBe('invalid_idempotent_request');
  });
});
