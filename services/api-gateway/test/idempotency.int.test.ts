import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { claimIdempotencyKey } from '../src/db/idempotency.ts';
import { sql } from 'kysely';
import { requestHash } from '../src/domain/idempotency.ts';
import { waitFor } from '@postline/testing';
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

  it('lets a retry take over a key whose lease ran out (its gateway died), and not one a live gateway holds', async () => {
    const team = await gw.createTeam();
    const hash = requestHash('POST', '/emails', body);
    for (const key of ['crashed', 'held'])
      await claimIdempotencyKey(gw.db, { teamId: team.teamId, key, requestHash: hash, ttlSeconds: 60 });
    await sql`update idempotency_keys set lease_expires_at = now() - interval '1 second' where team_id = ${team.teamId} and key = 'crashed'`.execute(
      gw.db,
    );

    const held = await call(gw, 'POST', '/emails', { key: team.apiKey, body, headers: { 'idempotency-key': 'held' } });
    expect(held.body.name).toBe('concurrent_idempotent_requests');
    // Taken over and forwarded: this gateway has no sender to reach, so the retry's own answer is a 503.
    const crashed = await call(gw, 'POST', '/emails', {
      key: team.apiKey,
      body,
      headers: { 'idempotency-key': 'crashed' },
    });
    expect(crashed.status).toBe(503);
  });

  it('lets only one of many retries racing for a key whose lease ran out take it over', async () => {
    const team = await gw.createTeam();
    const input = {
      teamId: team.teamId,
      key: 'raced',
      requestHash: requestHash('POST', '/emails', body),
      ttlSeconds: 60,
    };
    await claimIdempotencyKey(gw.db, input);
    await sql`update idempotency_keys set lease_expires_at = now() - interval '1 second' where team_id = ${team.teamId} and key = 'raced'`.execute(
      gw.db,
    );
    const claims = await Promise.all(Array.from({ length: 8 }, () => claimIdempotencyKey(gw.db, input)));
    expect(claims.filter((claim) => claim.kind === 'claimed')).toHaveLength(1);
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

/**
 * A stand-in for the sender as far as keys go: it keeps its own record of each key and the email it accepted
 * (one per key), and answers a key it knows with what it answered. Told by the subject, it cuts the connection
 * once after accepting (the answer is lost on the way), answers 503 once before accepting anything, or holds
 * its answer until the test lets it go.
 */
function keyedOwner() {
  const accepted = new Map<string, string>();
  const forwards: string[] = [];
  const failedOnce = new Set<string>();
  const holding: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const key = String(req.headers['x-postline-idempotency-key']);
      const { subject } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { subject: string };
      forwards.push(key);
      const answer = () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: accepted.get(key) }));
      };
      if (subject === 'unavailable' && !failedOnce.has(key)) {
        failedOnce.add(key);
        res.statusCode = 503;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ statusCode: 503, name: 'service_unavailable', message: 'Try again.' }));
        return;
      }
      if (!accepted.has(key)) accepted.set(key, `email-${accepted.size + 1}`);
      if (subject === 'cut' && !failedOnce.has(key)) {
        failedOnce.add(key);
        req.socket.destroy();
      } else if (subject === 'hold') holding.push(answer);
      else answer();
    });
  });
  return {
    server,
    accepted,
    forwards: (key: string) => forwards.filter((k) => k === key).length,
    held: () => holding.length,
    letGo: () => holding.splice(0).forEach((answer) => answer()),
  };
}

describe('Idempotency-Key when a forward fails or a gateway dies', () => {
  const owner = keyedOwner();
  // A short lease, renewed every 300 ms: a live request is seen to outlast it several times.
  const LEASE_MS = 1_500;
  let gw2: Gateway;
  beforeAll(async () => {
    await new Promise<void>((r) => owner.server.listen(0, '127.0.0.1', r));
    gw2 = await startGateway({
      owners: { sender: `http://127.0.0.1:${(owner.server.address() as AddressInfo).port}` },
      idempotencyLeaseMs: LEASE_MS,
    });
  });
  afterAll(async () => {
    owner.letGo();
    await gw2.stop();
    await new Promise<void>((r) => owner.server.close(() => r()));
  });
  const send = (apiKey: string, key: string, subject: string) =>
    call(gw2, 'POST', '/emails', { key: apiKey, body: { ...body, subject }, headers: { 'idempotency-key': key } });

  it("releases the key when the owner cuts the connection after accepting: the retry gets the owner's answer at once, and one email", async () => {
    const team = await gw2.createTeam();
    const first = await send(team.apiKey, 'cut-after-accept', 'cut');
    expect(first.status).toBe(503);
    expect(first.body.name).toBe('service_unavailable');
    const retry = await send(team.apiKey, 'cut-after-accept', 'cut');
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ id: owner.accepted.get('cut-after-accept') });
    expect(owner.forwards('cut-after-accept')).toBe(2);
    const replay = await send(team.apiKey, 'cut-after-accept', 'cut');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
  });

  it('releases the key when the owner answers 503, so the retry is forwarded at once', async () => {
    const team = await gw2.createTeam();
    expect((await send(team.apiKey, 'owner-503', 'unavailable')).status).toBe(503);
    const retry = await send(team.apiKey, 'owner-503', 'unavailable');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(owner.forwards('owner-503')).toBe(2);
  });

  it('keeps the key of a live request fresh past its lease: a retry meanwhile is 409, then replays the answer', async () => {
    const team = await gw2.createTeam();
    const first = send(team.apiKey, 'long', 'hold');
    await waitFor('the owner to hold the request', () => owner.held() === 1);
    const outlasted = async () => {
      const { rows } = await sql<{ outlasted: boolean }>`
        select now() > created_at + make_interval(secs => ${(3 * LEASE_MS) / 1000}) and lease_expires_at > now() as outlasted
        from idempotency_keys where team_id = ${team.teamId} and key = 'long'`.execute(gw2.db);
      return rows[0]?.outlasted === true;
    };
    await waitFor('the request to outlast its first lease three times, renewed', outlasted);
    const meanwhile = await send(team.apiKey, 'long', 'hold');
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.name).toBe('concurrent_idempotent_requests');
    owner.letGo();
    expect((await first).status).toBe(200);
    const after = await send(team.apiKey, 'long', 'hold');
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(owner.forwards('long')).toBe(1);
  });

  it('lets one of two retries take over the key of a dead gateway; the other is 409 while the first is in flight', async () => {
    const team = await gw2.createTeam();
    const hash = requestHash('POST', '/emails', { ...body, subject: 'hold' });
    await claimIdempotencyKey(gw2.db, { teamId: team.teamId, key: 'orphan', requestHash: hash, ttlSeconds: 60 });
    await sql`update idempotency_keys set lease_expires_at = now() - interval '1 second' where team_id = ${team.teamId} and key = 'orphan'`.execute(
      gw2.db,
    );
    const retries = [send(team.apiKey, 'orphan', 'hold'), send(team.apiKey, 'orphan', 'hold')];
    await waitFor('the owner to hold one retry', () => owner.held() === 1);
    const loser = await Promise.race(retries);
    expect(loser.status).toBe(409);
    expect(loser.body.name).toBe('concurrent_idempotent_requests');
    owner.letGo();
    const statuses = (await Promise.all(retries)).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    expect(owner.forwards('orphan')).toBe(1);
  });
});
