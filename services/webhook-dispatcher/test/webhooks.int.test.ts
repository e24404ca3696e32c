// Webhooks end to end: the official resend SDK through the real gateway; the real webhook-dispatcher,
// scheduler and domain-verifier processes; RabbitMQ and Postgres; a local receiver that verifies every
// delivery with the public `standardwebhooks` and `svix` packages. Events come from the real
// domain-verifier (domain.created) and, for email events until the sender lands, are published to the
// broker directly. POSTLINE_DELAY_SCALE shrinks the 27 h 35 min retry schedule to about 2 s, the 24 h
// rotation overlap to ~1.7 s and the 5-day disable window to ~8.6 s (those two moved back in the database
// rather than waited out). A dispatcher killed mid-attempt: tests/e2e/restarts.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import amqp from 'amqplib';
import { randomUUID } from 'node:crypto';
import type { Resend } from 'resend';
import { sql, type Kysely } from 'kysely';
import { createDb } from '@postline/platform';
import type { DispatcherDb } from '../src/db/schema.ts';
import {
  deliveredEnvelope,
  observeBroker,
  useSystem,
  startWebhookReceiver,
  verifyDelivery,
  waitFor,
  type BrokerObserver,
  type ReceivedDelivery,
  type SharedSystem,
  type WebhookReceiver,
  testResend,
} from '@postline/testing';

jest.setTimeout(90_000);

const SCALE = 0.00002;
const WAITS_S = [5, 300, 1800, 7200, 18000, 36000, 36000];

let system: SharedSystem;
let resend: Resend;
let apiKey: string;
let teamId: string;
let channel: amqp.Channel;
let connection: amqp.ChannelModel;
let db: Kysely<DispatcherDb>;
let disabledNotices: BrokerObserver;
const receivers: WebhookReceiver[] = [];
const hooks: string[] = [];

const world = useSystem({ env: { POSTLINE_DELAY_SCALE: String(SCALE) } });

beforeAll(async () => {
  ({ system } = world);
  const team = await system.admin('team', 'create', '--name', 'Hooks');
  apiKey = String(team.api_key);
  teamId = String(team.team_id);
  resend = testResend(apiKey, system.apiUrl);
  connection = await amqp.connect(String(system.env.AMQP_URL));
  channel = await connection.createChannel();
  db = createDb<DispatcherDb>({ url: String(system.env.DATABASE_URL), schema: 'webhook_dispatcher' }).db;
  disabledNotices = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.webhook.disabled' }],
  });
}, 90_000);

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await connection?.close();
  await disabledNotices?.close();
  await db?.destroy();
}, 30_000);

// Each test's endpoints go away after it, so one test's events never reach another test's receivers.
afterEach(async () => {
  for (const id of hooks.splice(0)) await resend.webhooks.remove(id);
});

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  return r;
}

async function subscribe(url: string, events: string[] = ['email.delivered']) {
  const { data, error } = await resend.webhooks.create({ endpoint: url, events: events as never });
  if (error || !data) throw new Error(`create webhook: ${JSON.stringify(error)}`);
  hooks.push(data.id);
  return data;
}

/** Publishes a public event as the sender would (through the broker), for this test's team. */
function publishDelivered(team = teamId, emailId: string = randomUUID()): string {
  const envelope = deliveredEnvelope({ teamId: team, emailId });
  channel.publish(
    `${String(system.env.BROKER_PREFIX)}.events`,
    'email.delivered',
    Buffer.from(JSON.stringify(envelope)),
    { persistent: true },
  );
  return emailId;
}

async function call(method: string, path: string, body?: unknown, key = apiKey) {
  const r = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> & { data?: Record<string, unknown>[] } };
}

const forEmail = (emailId: string) => (d: ReceivedDelivery) => d.json.data.email_id === emailId;

/**
 * Resolves once an event published now has been through its whole retry schedule on `r`, which must fail
 * it: eight attempts, waits up to the longest included. Whatever the dispatcher had scheduled before, on
 * any wait of the schedule, has been sent by then (timers fire in due order), so a test can then check
 * that something was not.
 */
async function afterAFullSchedule(r: WebhookReceiver): Promise<void> {
  const marker = publishDelivered();
  await r.waitFor('a later event through its whole retry schedule', (ds) => ds.filter(forEmail(marker)).length === 8);
}

/** When the secret an endpoint had before its last rotation stops signing (ms since the epoch), read from its row. */
async function previousSecretExpiry(hookId: string): Promise<number> {
  const { db } = createDb<DispatcherDb>({ url: String(system.env.DATABASE_URL), schema: 'webhook_dispatcher' });
  try {
    const row = await db
      .selectFrom('webhook_endpoints')
      .select('previous_secret_expires_at')
      .where('id', '=', hookId)
      .executeTakeFirstOrThrow();
    if (!row.previous_secret_expires_at) throw new Error('no previous secret');
    return row.previous_secret_expires_at.getTime();
  } finally {
    await db.destroy();
  }
}

/** Starts the failure streak of endpoint `hookId` (once its first failure is recorded) `agoMs` before now. */
async function moveStreak(hookId: string, agoMs: number): Promise<void> {
  await waitFor('the failure streak recorded', async () => {
    const { numUpdatedRows } = await db
      .updateTable('webhook_endpoints')
      .set({ failing_since: sql<Date>`now() - make_interval(secs => ${agoMs / 1000})` })
      .where('id', '=', hookId)
      .where('failing_since', 'is not', null)
      .executeTakeFirst();
    return numUpdatedRows === 1n;
  });
}

describe('webhook management', () => {
  it('creates, gets, lists, updates and removes endpoints with the resend SDK, each with its own whsec_ secret', async () => {
    const r = await receiver();
    const created = await subscribe(r.url, ['email.sent', 'domain.created']);
    expect(created).toEqual({
      object: 'webhook',
      id: expect.any(String),
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    const other = await subscribe(r.url);
    expect(other.signing_secret).not.toBe(created.signing_secret);

    const got = await resend.webhooks.get(created.id);
    expect(got.data).toEqual({
      object: 'webhook',
      id: created.id,
      endpoint: r.url,
      events: ['email.sent', 'domain.created'],
      status: 'enabled',
      created_at: expect.stringMatching(/\+00$/),
      signing_secret: created.signing_secret,
      previous_secret_expires_at: null,
      disabled_reason: null,
      disabled_at: null,
      disabled_by: null,
      failing_since: null,
    });
    const list = await resend.webhooks.list();
    expect(list.data?.data.map((w) => w.id)).toEqual(expect.arrayContaining([created.id, other.id]));
    expect(list.data?.data.find((w) => w.id === created.id)).not.toHaveProperty('signing_secret');

    expect((await resend.webhooks.update(created.id, { events: ['email.bounced'], status: 'disabled' })).data).toEqual({
      object: 'webhook',
      id: created.id,
    });
    expect((await resend.webhooks.get(created.id)).data).toMatchObject({
      events: ['email.bounced'],
      status: 'disabled',
      disabled_by: 'api',
      disabled_at: expect.stringMatching(/\+00$/),
    });
    expect((await resend.webhooks.remove(created.id)).data).toEqual({
      object: 'webhook',
      id: created.id,
      deleted: true,
    });
    expect((await resend.webhooks.get(created.id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  it('refuses unknown event names, empty lists and unsafe URLs with named 422s', async () => {
    const unknown = await call('POST', '/webhooks', {
      endpoint: 'https://hooks.example.com/x',
      events: ['email.sent', 'email.exploded'],
    });
    expect(unknown).toMatchObject({
      status: 422,
      body: { name: 'validation_error', message: expect.stringContaining('`email.exploded`') },
    });
    expect(await call('POST', '/webhooks', { endpoint: 'https://hooks.example.com/x', events: [] })).toMatchObject({
      status: 422,
    });
    expect(await call('POST', '/webhooks', { events: ['email.sent'] })).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field' },
    });
    expect(
      await call('POST', '/webhooks', { endpoint: 'https://user:pw@hooks.example.com/x', events: ['email.sent'] }),
    ).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    expect(await call('POST', '/webhooks', { endpoint: 'not a url', events: ['email.sent'] })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    const r = await receiver();
    const { id } = await subscribe(r.url);
    expect(await call('PATCH', `/webhooks/${id}`, { events: ['contact.exploded'] })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
  });

  it("answers 404 for another team's endpoint and events", async () => {
    const r = await receiver();
    const { id } = await subscribe(r.url);
    const stranger = String((await system.admin('team', 'create', '--name', 'Stranger')).api_key);
    for (const [method, path] of [
      ['GET', `/webhooks/${id}`],
      ['PATCH', `/webhooks/${id}`],
      ['DELETE', `/webhooks/${id}`],
      ['POST', `/webhooks/${id}/signing-secret/rotate`],
      ['GET', `/webhooks/${id}/events`],
    ] as const) {
      expect({
        path,
        ...(await call(method, path, method === 'PATCH' ? { status: 'disabled' } : undefined, stranger)),
      }).toMatchObject({ path, status: 404 });
    }
    expect((await resend.webhooks.get(id)).data?.status).toBe('enabled');
  });
});

describe('delivery', () => {
  it('delivers a signed domain.created from the real domain-verifier, verifiable with standardwebhooks and svix', async () => {
    const r = await receiver();
    const { signing_secret: secret } = await subscribe(r.url, ['domain.created']);
    const name = `hooks${Date.now().toString(36)}.example.com`;
    const domain = await resend.domains.create({ name });
    await r.waitFor('domain.created', (ds) => ds.some((d) => d.json.data.name === name));
    const delivery = r.deliveries.find((d) => d.json.data.name === name)!;
    expect(verifyDelivery(delivery, secret)).toBe(true);
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['user-agent']).toBe('Postline-Webhooks/1.0');
    expect(delivery.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(delivery.headers['svix-id']).toBe(delivery.headers['webhook-id']);
    expect(delivery.json).toMatchObject({
      type: 'domain.created',
      created_at: expect.stringMatching(/Z$/),
      data: { id: domain.data?.id, records: expect.any(Array) },
    });
    // Tampered body, wrong secret, stale timestamp: the receiver's verifier refuses each.
    expect(verifyDelivery({ ...delivery, body: delivery.body.replace(name, 'evil.example.com') }, secret)).toBe(false);
    expect(verifyDelivery(delivery, 'whsec_' + Buffer.alloc(32, 1).toString('base64'))).toBe(false);
    const stale = String(Number(delivery.headers['webhook-timestamp']) - 600);
    expect(
      verifyDelivery(
        { ...delivery, headers: { ...delivery.headers, 'webhook-timestamp': stale, 'svix-timestamp': stale } },
        secret,
      ),
    ).toBe(false);
    // Only subscribed endpoints get it; the event log shows it delivered once the outcome is recorded
    // (outcomes are recorded in batches, a few milliseconds after the response).
    const hookId = (await resend.webhooks.list()).data!.data.find((w) => w.endpoint === r.url)!.id;
    await waitFor(
      'recorded',
      async () => (await call('GET', `/webhooks/${hookId}/events`)).body.data?.[0]?.status === 'success',
    );
    const events = await call('GET', `/webhooks/${hookId}/events`);
    expect(events.body.data?.[0]).toMatchObject({
      id: delivery.headers['webhook-id'],
      type: 'domain.created',
      status: 'success',
    });
  });

  it('records a success whose response body holds NUL bytes (kept as U+FFFD), instead of retrying it for ever', async () => {
    const r = await receiver();
    r.reply(() => ({ status: 200, body: 'ok\u0000done' }));
    const hook = await subscribe(r.url);
    const emailId = publishDelivered();
    await r.waitFor('the delivery', (ds) => ds.some(forEmail(emailId)));
    const eventId = r.deliveries.find(forEmail(emailId))!.headers['webhook-id']!;
    await waitFor(
      'recorded',
      async () => (await call('GET', `/webhooks/${hook.id}/events/${eventId}`)).body.status === 'success',
    );
    const log = await call('GET', `/webhooks/${hook.id}/events/${eventId}/attempts`);
    expect(log.body.data).toEqual([expect.objectContaining({ http_status_code: 200, response: 'ok\uFFFDdone' })]);
  });

  it('retries on the schedule of docs/behaviour.md until the endpoint succeeds, signing each attempt afresh with the same webhook-id', async () => {
    const r = await receiver();
    r.reply((_d, n) => (n <= 3 ? { status: 500, body: 'boom' } : { status: 204 }));
    const hook = await subscribe(r.url);
    const emailId = publishDelivered();
    await r.waitFor('4 attempts', (ds) => ds.filter(forEmail(emailId)).length === 4);
    const attempts = r.deliveries.filter(forEmail(emailId));
    expect(new Set(attempts.map((d) => d.headers['webhook-id'])).size).toBe(1);
    expect(attempts.every((d) => verifyDelivery(d, hook.signing_secret))).toBe(true);
    const eventId = attempts[0]!.headers['webhook-id']!;
    await waitFor(
      'success',
      async () => (await call('GET', `/webhooks/${hook.id}/events/${eventId}`)).body.status === 'success',
    );
    const event = await call('GET', `/webhooks/${hook.id}/events/${eventId}`);
    expect(event.body).toMatchObject({
      object: 'webhook_event',
      id: eventId,
      type: 'email.delivered',
      next_attempt_at: null,
      payload: { data: { email_id: emailId } },
    });
    const log = await call('GET', `/webhooks/${hook.id}/events/${eventId}/attempts`);
    expect(log.body.data?.map((a) => a.http_status_code).sort()).toEqual([204, 500, 500, 500]);
    expect(log.body.data?.find((a) => a.http_status_code === 500)).toMatchObject({
      response: 'boom',
      sent_at: expect.any(String),
      id: expect.stringMatching(/^atmpt_/),
    });
  });

  it('makes 8 attempts with the scaled waits (±10%), then marks the event failed; a replay sends it once more with the same id', async () => {
    const r = await receiver();
    r.reply(() => ({ status: 503, body: 'down' }));
    const hook = await subscribe(r.url);
    const emailId = publishDelivered();
    await r.waitFor('8 attempts', (ds) => ds.filter(forEmail(emailId)).length === 8);
    const attempts = r.deliveries.filter(forEmail(emailId));
    const eventId = attempts[0]!.headers['webhook-id']!;
    await waitFor(
      'failed',
      async () => (await call('GET', `/webhooks/${hook.id}/events/${eventId}`)).body.status === 'failed',
    );
    // Waits long enough to measure (2 h and more, scaled) are never shorter than the schedule's -10%, and not
    // grossly longer than its +10%: the slack above is the timer's firing delay on a loaded machine (the jitter
    // itself is unit-tested in domain.test.ts). Each one outside is listed with the attempt it led to.
    const gaps = [3, 4, 5, 6].map((i) => {
      const wait = WAITS_S[i]! * 1000 * SCALE;
      return {
        attempt: i + 2,
        gap: attempts[i + 1]!.at - attempts[i]!.at,
        min: wait * 0.9 - 5,
        max: wait * 1.1 + 1_500,
      };
    });
    expect(gaps.filter(({ gap, min, max }) => gap < min || gap > max)).toEqual([]);
    expect((await call('GET', `/webhooks/${hook.id}/events/${eventId}`)).body).toMatchObject({
      status: 'failed',
      next_attempt_at: null,
      attempts: 8,
    });
    await afterAFullSchedule(r);
    expect(r.deliveries.filter(forEmail(emailId)).length).toBe(8);

    // The replay succeeds; later events (the next marker) still fail.
    r.reply((d) => (forEmail(emailId)(d) ? { status: 200 } : { status: 503, body: 'down' }));
    const replay = await call('POST', `/webhooks/${hook.id}/events/${eventId}/replay`);
    expect(replay.body).toEqual({ object: 'webhook_event', id: eventId });
    await r.waitFor('the replay', (ds) => ds.filter(forEmail(emailId)).length === 9);
    const again = r.deliveries.filter(forEmail(emailId))[8]!;
    expect(again.headers['webhook-id']).toBe(eventId);
    expect(verifyDelivery(again, hook.signing_secret)).toBe(true);
    await waitFor(
      'replayed success',
      async () => (await call('GET', `/webhooks/${hook.id}/events/${eventId}`)).body.status === 'success',
    );
    // One replay recorded, the schedule untouched, and nothing sent after it.
    expect((await call('GET', `/webhooks/${hook.id}/events/${eventId}`)).body).toMatchObject({
      status: 'success',
      next_attempt_at: null,
      attempts: 8,
    });
    await afterAFullSchedule(r);
    const log = (await call('GET', `/webhooks/${hook.id}/events/${eventId}/attempts`)).body.data!;
    expect(log.map((a) => a.replay).sort()).toEqual([false, false, false, false, false, false, false, false, true]);
    expect(r.deliveries.filter(forEmail(emailId)).length).toBe(9);
  });

  it('signs with both secrets for the (scaled) 24 hours after a rotation, new first, then only with the new one', async () => {
    const r = await receiver();
    const hook = await subscribe(r.url);
    const rotated = await call('POST', `/webhooks/${hook.id}/signing-secret/rotate`);
    expect(rotated.body).toMatchObject({
      object: 'webhook',
      id: hook.id,
      signing_secret: expect.stringMatching(/^whsec_/),
    });
    const fresh = String(rotated.body.signing_secret);
    const during = publishDelivered();
    await r.waitFor('delivery during overlap', (ds) => ds.some(forEmail(during)));
    const d1 = r.deliveries.find(forEmail(during))!;
    expect(d1.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifyDelivery(d1, fresh)).toBe(true);
    expect(verifyDelivery(d1, hook.signing_secret)).toBe(true);

    const expiresAt = await previousSecretExpiry(hook.id);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000 * SCALE);
    // Its expiry is moved to the past rather than waited for.
    await db
      .updateTable('webhook_endpoints')
      .set({ previous_secret_expires_at: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', hook.id)
      .execute();
    const after = publishDelivered();
    await r.waitFor('delivery after overlap', (ds) => ds.some(forEmail(after)));
    const d2 = r.deliveries.find(forEmail(after))!;
    expect(d2.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(verifyDelivery(d2, fresh)).toBe(true);
    expect(verifyDelivery(d2, hook.signing_secret)).toBe(false);
  });

  it('counts a redirect as a failure without following it, and keeps only the first 4 KB of a large body', async () => {
    const target = await receiver();
    const r = await receiver();
    r.reply((_d, n) =>
      n === 1 ? { status: 302, headers: { location: target.url } } : { stream: 2 * 1024 * 1024, status: 500 },
    );
    const hook = await subscribe(r.url);
    const emailId = publishDelivered();
    await r.waitFor('two attempts', (ds) => ds.filter(forEmail(emailId)).length >= 2);
    const eventId = r.deliveries[0]!.headers['webhook-id']!;
    await waitFor(
      'two attempts recorded',
      async () => ((await call('GET', `/webhooks/${hook.id}/events/${eventId}/attempts`)).body.data?.length ?? 0) >= 2,
    );
    const log = (await call('GET', `/webhooks/${hook.id}/events/${eventId}/attempts`)).body.data!;
    const attemptByStatus = Object.fromEntries(log.map((a) => [String(a.http_status_code), a]));
    expect(attemptByStatus['302']).toBeDefined();
    expect(String(attemptByStatus['500']?.response).length).toBeLessThanOrEqual(4096);
    expect(String(attemptByStatus['500']?.response).length).toBeGreaterThan(0);
    expect(target.deliveries).toHaveLength(0);
  });

  it('disables an endpoint after every attempt failed for the (scaled) 5 days, records its events failed meanwhile, and a replay since the failures began recovers them once enabled', async () => {
    const r = await receiver();
    r.reply(() => ({ status: 500 }));
    const hook = await subscribe(r.url);
    // A healthy endpoint of the same team gets every event too. Once it has an event's record, that event's
    // fan-out is over: the records of one event, on every endpoint, are written in one statement.
    const witness = await receiver();
    const witnessHook = await subscribe(witness.url);
    const fannedOut = async () =>
      ((await call('GET', `/webhooks/${witnessHook.id}/events?limit=100`)).body.data ?? []).length;
    const published: string[] = [];
    const disabledAfterMs = 5 * 24 * 3600 * 1000 * SCALE;
    const enabled = async () => (await resend.webhooks.get(hook.id)).data?.status === 'enabled';
    const first = publishDelivered();
    published.push(first);
    await r.waitFor('its eight attempts', (ds) => ds.filter(forEmail(first)).length === 8);
    expect(await enabled()).toBe(true);
    // The failure streak is moved back in the database instead of waited out. A failure 3 s before its
    // end leaves the endpoint enabled; the next failure past it disables the endpoint.
    await moveStreak(hook.id, disabledAfterMs - 3000);
    const late = publishDelivered();
    published.push(late);
    await r.waitFor('its first attempt', (ds) => ds.some(forEmail(late)));
    const lateId = r.deliveries.find(forEmail(late))!.headers['webhook-id']!;
    await waitFor(
      'its first attempt recorded',
      async () => ((await call('GET', `/webhooks/${hook.id}/events/${lateId}/attempts`)).body.data?.length ?? 0) >= 1,
    );
    expect(await enabled()).toBe(true);
    await moveStreak(hook.id, disabledAfterMs + 3_600_000);
    // Its retries fail past the streak's end (one more event at a time, had they run out first).
    while (await enabled()) {
      const emailId = publishDelivered();
      published.push(emailId);
      await waitFor(
        'its eight attempts, or the endpoint disabled',
        async () => r.deliveries.filter(forEmail(emailId)).length === 8 || !(await enabled()),
      );
    }
    // Every event published so far fanned out, and each of its records on this endpoint ended (failed, as
    // the next retry finds the endpoint disabled): nothing is under way for it any more.
    const events = async () => (await call('GET', `/webhooks/${hook.id}/events?limit=100`)).body.data ?? [];
    await waitFor(
      'every event fanned out and ended',
      async () =>
        (await fannedOut()) === published.length &&
        (await events()).every((e) => e.status === 'success' || e.status === 'failed'),
    );
    const disabled = (await call('GET', `/webhooks/${hook.id}`)).body;
    expect(disabled).toMatchObject({
      status: 'disabled',
      disabled_by: 'failures',
      disabled_reason: 'every delivery failed for 5 days',
      disabled_at: expect.stringMatching(/\+00$/),
      failing_since: expect.stringMatching(/\+00$/),
    });
    // The team's admins are told through an internal event, committed with the state change.
    const notice = await disabledNotices.waitFor(
      'the endpoint-disabled event',
      (m) => m.envelope.data.webhook_id === hook.id,
    );
    expect(notice.envelope).toMatchObject({
      team_id: teamId,
      data: { endpoint: r.url, reason: 'every delivery failed for 5 days' },
    });
    const deliveriesBefore = r.deliveries.length;

    // Disabled by its failures: a new event is recorded failed (endpoint_disabled), with no attempt.
    const whileDisabled = [publishDelivered(), publishDelivered(), publishDelivered()];
    await waitFor('the events fanned out', async () => (await fannedOut()) === published.length + whileDisabled.length);
    const recorded = (await events()).slice(0, whileDisabled.length);
    expect(recorded.map((e) => [e.status, e.failure_reason])).toEqual(
      whileDisabled.map(() => ['failed', 'endpoint_disabled']),
    );
    for (const e of recorded) {
      expect((await call('GET', `/webhooks/${hook.id}/events/${String(e.id)}/attempts`)).body.data).toEqual([]);
    }
    expect(r.deliveries.length).toBe(deliveriesBefore);

    // Enabled again: the failure streak is over; replaying every failure since it began recovers the events
    // of the whole run, those recorded while disabled included, each signed with the endpoint's secret.
    r.reply(() => ({ status: 200 }));
    await resend.webhooks.update(hook.id, { status: 'enabled' });
    expect((await call('GET', `/webhooks/${hook.id}`)).body).toMatchObject({
      status: 'enabled',
      disabled_reason: null,
      disabled_at: null,
      disabled_by: null,
      failing_since: null,
    });
    const since = String(disabled.failing_since).replace(' ', 'T').replace(/\+00$/, 'Z');
    const replay = await call('POST', `/webhooks/${hook.id}/events/replay`, { since, status: 'failed' });
    expect(replay.body).toMatchObject({ replayed: published.length + whileDisabled.length, next_since: null });
    const recovered = (ds: ReceivedDelivery[], id: string) =>
      ds.some((d) => forEmail(id)(d) && deliveriesBefore <= r.deliveries.indexOf(d));
    await r.waitFor('every event of the run recovered', (ds) =>
      [...published, ...whileDisabled].every((id) => recovered(ds, id)),
    );
    for (const d of r.deliveries.slice(deliveriesBefore)) expect(verifyDelivery(d, hook.signing_secret)).toBe(true);
    await waitFor('every event of the run delivered', async () =>
      (await events()).every((e) => e.status === 'success' && e.failure_reason === null),
    );
    const back = publishDelivered();
    await r.waitFor('delivery after re-enabling', (ds) => ds.some(forEmail(back)));
  });

  it('keeps delivering to other endpoints while one endpoint hangs past the 15 s timeout', async () => {
    const slow = await receiver();
    slow.reply(() => ({ hang: true }));
    const fast = await receiver();
    const slowHook = await subscribe(slow.url);
    await subscribe(fast.url);
    const ids = Array.from({ length: 20 }, () => publishDelivered());
    await fast.waitFor('all 20 on the fast endpoint', (ds) => ids.every((id) => ds.some(forEmail(id))), 10_000);
    // The hanging endpoint's attempt fails by timeout after 15 s and is retried later.
    const first = slow.deliveries[0]!;
    const eventId = first.headers['webhook-id']!;
    await waitFor(
      'a timed-out attempt',
      async () =>
        ((await call('GET', `/webhooks/${slowHook.id}/events/${eventId}/attempts`)).body.data?.length ?? 0) >= 1,
      25_000,
    );
    const [attempt] = (await call('GET', `/webhooks/${slowHook.id}/events/${eventId}/attempts`)).body.data!;
    expect(attempt).toMatchObject({ http_status_code: null, error: 'timeout' });
  });

  it('sends the first attempt of an event whose in-process delivery never ran (a crash) through the sweeper', async () => {
    const r = await receiver();
    const hook = await subscribe(r.url);
    // What a dispatcher that died between the fan-out commit and its first attempt leaves behind.
    const { db } = createDb<DispatcherDb>({ url: String(system.env.DATABASE_URL), schema: 'webhook_dispatcher' });
    const eventId = `msg_${randomUUID().replaceAll('-', '')}`;
    const emailId = randomUUID();
    const body = JSON.stringify({
      type: 'email.delivered',
      created_at: new Date().toISOString(),
      data: { email_id: emailId },
    });
    await db
      .insertInto('webhook_events')
      .values({
        id: eventId,
        endpoint_id: hook.id,
        team_id: teamId,
        source_event_id: randomUUID(),
        type: 'email.delivered',
        body,
        status: 'pending',
        next_attempt_at: new Date(Date.now() - 60_000),
      })
      .execute();
    await db.destroy();
    await r.waitFor('the swept first attempt', (ds) => ds.some(forEmail(emailId)), 20_000);
    const delivery = r.deliveries.find(forEmail(emailId))!;
    expect(delivery.headers['webhook-id']).toBe(eventId);
    expect(delivery.body).toBe(body);
    expect(verifyDelivery(delivery, hook.signing_secret)).toBe(true);
  });

  it('exposes delivery metrics', async () => {
    const metrics = await (await fetch(`${system.services['webhook-dispatcher'].url}/metrics`)).text();
    expect(metrics).toMatch(/webhook_deliveries_total\{[^}]*outcome="success"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/webhook_deliveries_total\{[^}]*outcome="failure"[^}]*\} [1-9]/);
    expect(metrics).toContain('webhook_attempt_duration_seconds_bucket');
    expect(metrics).toMatch(/webhook_events_pending\{[^}]*\} \d+/);
    expect(metrics).toMatch(/webhook_events_oldest_pending_age_seconds\{[^}]*\} [\d.]+/);
  });
});
