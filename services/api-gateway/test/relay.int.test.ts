// The gateway's side of the SMTP relay (the relay ⇄ gateway contract): GET /relay/credentials, the relay's
// key check at AUTH, and POST /emails with a raw message/rfc822 body (what the relay submits), through the
// real gateway to a local owner that records what it is sent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { nextSecond, waitFor } from '@postline/testing';
import { rawRequestHash } from '../src/domain/idempotency.ts';
import { call, startGateway, type Gateway } from './harness.ts';

type Received = { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer };
const received: Received[] = [];
const owner = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: `owner-${received.length}` }));
  });
});

let gw: Gateway;
beforeAll(async () => {
  await new Promise<void>((r) => owner.listen(0, '127.0.0.1', r));
  gw = await startGateway({
    rateLimitPerSecond: 3,
    owners: { sender: `http://127.0.0.1:${(owner.address() as AddressInfo).port}` },
  });
});
afterAll(async () => {
  await gw?.stop();
  await new Promise<void>((r) => owner.close(() => r()));
});

const MESSAGE = Buffer.from(
  [
    'From: Acme <hello@acme.test>',
    'To: jane@example.com',
    'Bcc: hidden@example.com',
    'Subject: Hi',
    '',
    'Hello \u00e9',
    '',
  ].join('\r\n'),
  'utf8',
);

type Answer = { status: number; headers: Headers; body: Record<string, unknown> };

/** POST /emails with a raw body, as the relay sends it. */
async function postRaw(
  key: string | undefined,
  body: Buffer | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const r = await fetch(`${gw.url}/emails`, {
    method: 'POST',
    headers: {
      'content-type': 'message/rfc822',
      'postline-envelope-from': 'bounces@acme.test',
      'postline-envelope-to': 'jane@example.com,hidden@example.com',
      'user-agent': 'Postline-SMTP-Relay/1.0',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe('GET /relay/credentials', () => {
  it('answers a valid key with its permission, for both permissions', async () => {
    const team = await gw.createTeam();
    const full = await call(gw, 'GET', '/relay/credentials', { key: team.apiKey });
    expect(full.status).toBe(200);
    expect(full.body).toEqual({ object: 'relay_credentials', permission: 'full_access' });
    const sending = await gw.createKey(team.teamId, 'sending_access');
    const restricted = await call(gw, 'GET', '/relay/credentials', { key: sending.apiKey });
    expect(restricted.status).toBe(200);
    expect(restricted.body).toEqual({ object: 'relay_credentials', permission: 'sending_access' });
    // The key check opens no other route to a sending_access key.
    expect((await call(gw, 'GET', '/api-keys', { key: sending.apiKey })).body.name).toBe('restricted_api_key');
    expect((await call(gw, 'POST', '/relay/credentials', { key: sending.apiKey })).status).toBe(401);
  });

  it("answers the gateway's usual errors: 401 missing_api_key, 403 invalid_api_key for an unknown, revoked or disabled key", async () => {
    expect((await call(gw, 'GET', '/relay/credentials')).body).toMatchObject({
      statusCode: 401,
      name: 'missing_api_key',
    });
    expect((await call(gw, 'GET', '/relay/credentials', { key: 'pl_unknown' })).body).toMatchObject({
      statusCode: 403,
      name: 'invalid_api_key',
    });
    const team = await gw.createTeam();
    const other = await gw.createKey(team.teamId, 'full_access');
    expect((await call(gw, 'DELETE', `/api-keys/${other.keyId}`, { key: team.apiKey })).status).toBe(200);
    expect((await call(gw, 'GET', '/relay/credentials', { key: other.apiKey })).body).toMatchObject({
      statusCode: 403,
      name: 'invalid_api_key',
    });
    await gw.db.updateTable('teams').set({ access_enabled: false }).where('id', '=', team.teamId).execute();
    await waitFor(
      'the team to be refused',
      async () => (await call(gw, 'GET', '/relay/credentials', { key: team.apiKey })).status === 403,
      2000,
    );
  });

  it('is not counted by the per-team rate limit', async () => {
    const team = await gw.createTeam();
    await nextSecond();
    const checks = await Promise.all(
      Array.from({ length: 6 }, () => call(gw, 'GET', '/relay/credentials', { key: team.apiKey })),
    );
    expect(checks.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(checks[0]?.headers.get('ratelimit-limit')).toBeNull();
    // The team's budget of this second (3) is still whole.
    const listed = await call(gw, 'GET', '/api-keys', { key: team.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('ratelimit-remaining')).toBe('2');
  });
});

describe('POST /emails with message/rfc822', () => {
  it('forwards the raw bytes and the envelope to the sender, with the team', async () => {
    const team = await gw.createTeam();
    const r = await postRaw(team.apiKey, MESSAGE);
    expect(r.status).toBe(200);
    const forwarded = received.at(-1) as Received;
    expect(forwarded.url).toBe('/emails');
    expect(forwarded.headers['content-type']).toBe('message/rfc822');
    expect(forwarded.headers['postline-envelope-from']).toBe('bounces@acme.test');
    expect(forwarded.headers['postline-envelope-to']).toBe('jane@example.com,hidden@example.com');
    expect(forwarded.headers['x-postline-team-id']).toBe(team.teamId);
    expect(forwarded.headers['user-agent']).toBe('Postline-SMTP-Relay/1.0');
    expect(forwarded.body.equals(MESSAGE)).toBe(true);
  });

  it('keeps JSON POST /emails as it was', async () => {
    const team = await gw.createTeam();
    const body = { from: 'a@acme.test', to: 'b@example.com', subject: 'x', text: 'y' };
    expect((await call(gw, 'POST', '/emails', { key: team.apiKey, body })).status).toBe(200);
    const forwarded = received.at(-1) as Received;
    expect(forwarded.headers['content-type']).toBe('application/json');
    expect(JSON.parse(forwarded.body.toString())).toEqual(body);
    expect(forwarded.headers['postline-envelope-to']).toBeUndefined();
  });

  it('takes a sending_access key, and refuses a missing key before reading the body', async () => {
    const team = await gw.createTeam();
    const sending = await gw.createKey(team.teamId, 'sending_access');
    expect((await postRaw(sending.apiKey, MESSAGE)).status).toBe(200);
    const before = received.length;
    expect((await postRaw(undefined, MESSAGE)).body).toMatchObject({ statusCode: 401, name: 'missing_api_key' });
    expect(received.length).toBe(before);
  });

  it('refuses a body over 40 MB with 413, declared or streamed, without forwarding it', async () => {
    const team = await gw.createTeam({ rateLimit: 100 });
    const before = received.length;
    const big = Buffer.alloc(40 * 1024 * 1024 + 1, 0x61);
    const declared = await postRaw(team.apiKey, big);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({
      statusCode: 413,
      name: 'validation_error',
      message: 'The request body is too large: a raw email may be at most 40 MB.',
    });
    let sent = 0;
    const chunk = new Uint8Array(1024 * 1024).fill(0x61);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 41) return controller.close();
        sent++;
        controller.enqueue(chunk);
      },
    });
    const streamed = await postRaw(team.apiKey, stream);
    expect(streamed.status).toBe(413);
    expect(streamed.headers.get('connection')).toBe('close');
    expect(received.length).toBe(before);
    // The cut connection is not reused: the next request goes through.
    expect((await postRaw(team.apiKey, MESSAGE, { 'x-request-id': 'after-413' })).status).toBe(200);
  });

  it('counts one request against the rate limit', async () => {
    const team = await gw.createTeam();
    await nextSecond();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await postRaw(team.apiKey, MESSAGE));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(answers[3]?.body).toMatchObject({ name: 'rate_limit_exceeded' });
  });

  it('holds an idempotency key over the raw bytes and the envelope: the same replays, other bytes or envelope → 409', async () => {
    const team = await gw.createTeam({ rateLimit: 100 });
    const headers = { 'idempotency-key': 'raw-1' };
    const first = await postRaw(team.apiKey, MESSAGE, headers);
    expect(first.status).toBe(200);
    const forwarded = received.at(-1) as Received;
    expect(forwarded.headers['x-postline-idempotency-key']).toBe('raw-1');
    const hash = rawRequestHash(
      'POST',
      '/emails',
      { from: 'bounces@acme.test', to: 'jane@example.com,hidden@example.com' },
      MESSAGE,
    );
    expect(forwarded.headers['x-postline-idempotency-hash']).toBe(hash);
    const count = received.length;

    const again = await postRaw(team.apiKey, MESSAGE, headers);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(received.length).toBe(count);

    const otherBytes = Buffer.concat([MESSAGE, Buffer.from('more\r\n')]);
    expect((await postRaw(team.apiKey, otherBytes, headers)).body).toMatchObject({
      statusCode: 409,
      name: 'invalid_idempotent_request',
    });
    const otherEnvelope = await postRaw(team.apiKey, MESSAGE, {
      ...headers,
      'postline-envelope-to': 'jane@example.com',
    });
    expect(otherEnvelope.body).toMatchObject({ statusCode: 409, name: 'invalid_idempotent_request' });
    expect(received.length).toBe(count);
  });

  it('logs the request with a summary of the body (type, size, envelope), never the message', async () => {
    const team = await gw.createTeam({ rateLimit: 100 });
    expect((await postRaw(team.apiKey, MESSAGE)).status).toBe(200);
    await gw.flush();
    const list = await call(gw, 'GET', '/logs', { key: team.apiKey });
    const item = (list.body.data as { id: string; endpoint: string; method: string }[]).find(
      (log) => log.endpoint === '/emails' && log.method === 'POST',
    );
    const log = await call(gw, 'GET', `/logs/${item?.id}`, { key: team.apiKey });
    expect(log.body).toMatchObject({
      response_status: 200,
      user_agent: 'Postline-SMTP-Relay/1.0',
      request_body: {
        content_type: 'message/rfc822',
        size: MESSAGE.length,
        envelope_from: 'bounces@acme.test',
        envelope_to: 'jane@example.com,hidden@example.com',
      },
    });
    expect(JSON.stringify(log.body)).not.toContain('Hello');
  });
});
