// Test events and bulk recovery end to end: the real gateway, webhook-dispatcher and scheduler, RabbitMQ and
// Postgres, and a local receiver that verifies each delivery with the public `standardwebhooks` and `svix`
// packages. POSTLINE_DELAY_SCALE shrinks the retry schedule (27 h 35 min) to about 2 s, so an event fails for
// good within seconds.
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  startWebhookReceiver,
  useSystem,
  verifyDelivery,
  waitFor,
  type SharedSystem,
  type WebhookReceiver,
} from '@postline/testing';

jest.setTimeout(90_000);

let system: SharedSystem;
let apiKey: string;
let otherKey: string;
const receivers: WebhookReceiver[] = [];
const hooks: string[] = [];

// The same environment as webhooks.int.test.ts: one shared system for both files.
const world = useSystem({ env: { POSTLINE_DELAY_SCALE: '0.00002' } });

beforeAll(async () => {
  ({ system } = world);
  apiKey = String((await system.admin('team', 'create', '--name', 'Recovery')).api_key);
  otherKey = String((await system.admin('team', 'create', '--name', 'Elsewhere')).api_key);
}, 90_000);

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
}, 30_000);

afterEach(async () => {
  for (const id of hooks.splice(0)) await call('DELETE', `/webhooks/${id}`);
});

type Answer = { status: number; body: Record<string, unknown> & { data?: Record<string, unknown>[] } };

async function call(method: string, path: string, body?: unknown, key = apiKey): Promise<Answer> {
  const r = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Answer['body'] };
}

async function endpoint(): Promise<{ r: WebhookReceiver; id: string; secret: string }> {
  const r = await startWebhookReceiver();
  receivers.push(r);
  const created = await call('POST', '/webhooks', { endpoint: r.url, events: ['email.delivered'] });
  expect(created.status).toBe(201);
  const id = String(created.body.id);
  hooks.push(id);
  return { r, id, secret: String(created.body.signing_secret) };
}

const eventOf = async (hookId: string, eventId: string) =>
  (await call('GET', `/webhooks/${hookId}/events/${eventId}`)).body;

describe('test events', () => {
  it('delivers a signed sample of the event asked for (email.sent by default), listed with the endpoint’s events', async () => {
    const { r, id, secret } = await endpoint();
    const sent = await call('POST', `/webhooks/${id}/test`, { type: 'domain.created' });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ object: 'webhook_event', id: expect.stringMatching(/^msg_/), type: 'domain.created' });
    await r.waitFor('the test event', (ds) => ds.some((d) => d.headers['webhook-id'] === sent.body.id));
    const delivery = r.deliveries.find((d) => d.headers['webhook-id'] === sent.body.id)!;
    expect(verifyDelivery(delivery, secret)).toBe(true);
    expect(delivery.json).toMatchObject({ type: 'domain.created', data: { name: 'example.com' } });
    await waitFor(
      'the test event delivered',
      async () => (await eventOf(id, String(sent.body.id))).status === 'success',
    );
    const events = await call('GET', `/webhooks/${id}/events`);
    expect(events.body.data).toEqual([expect.objectContaining({ id: sent.body.id, type: 'domain.created' })]);

    const byDefault = await call('POST', `/webhooks/${id}/test`);
    expect(byDefault.body.type).toBe('email.sent');
    await r.waitFor('the default test event', (ds) => ds.some((d) => d.headers['webhook-id'] === byDefault.body.id));
    expect(r.deliveries.find((d) => d.headers['webhook-id'] === byDefault.body.id)!.json.type).toBe('email.sent');
  });

  it('refuses an unknown event name, a disabled endpoint and another team’s endpoint', async () => {
    const { id } = await endpoint();
    const unknown = await call('POST', `/webhooks/${id}/test`, { type: 'email.exploded' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.name).toBe('validation_error');
    expect((await call('POST', `/webhooks/${id}/test`, {}, otherKey)).status).toBe(404);
    expect((await call('POST', '/webhooks/not-an-id/test', {})).status).toBe(404);
    await call('PATCH', `/webhooks/${id}`, { status: 'disabled' });
    const disabled = await call('POST', `/webhooks/${id}/test`, {});
    expect(disabled.status).toBe(422);
    expect(disabled.body.message).toMatch(/disabled/);
    expect((await call('GET', `/webhooks/${id}/events`)).body.data).toEqual([]);
  });
});

describe('bulk recovery', () => {
  it('replays every event that failed since a time, once, with its own webhook-id', async () => {
    const { r, id, secret } = await endpoint();
    r.reply(() => ({ status: 503, body: 'down' }));
    const since = new Date().toISOString();
    const first = String((await call('POST', `/webhooks/${id}/test`, { type: 'email.delivered' })).body.id);
    const second = String((await call('POST', `/webhooks/${id}/test`, { type: 'email.bounced' })).body.id);
    await waitFor(
      'both failed for good',
      async () => (await eventOf(id, first)).status === 'failed' && (await eventOf(id, second)).status === 'failed',
      30_000,
    );
    expect(r.deliveries).toHaveLength(16);

    r.reply(() => ({ status: 200 }));
    // Nothing failed after now; then everything since the start.
    expect(
      (await call('POST', `/webhooks/${id}/events/replay`, { since: new Date().toISOString(), status: 'failed' })).body,
    ).toEqual({
      object: 'replay',
      replayed: 0,
      next_since: null,
    });
    const replay = await call('POST', `/webhooks/${id}/events/replay`, { since, status: 'failed' });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ object: 'replay', replayed: 2, next_since: null });
    await r.waitFor('both replayed', (ds) => ds.length === 18);
    const replayed = r.deliveries.slice(16);
    expect(replayed.map((d) => d.headers['webhook-id']).sort()).toEqual([first, second].sort());
    expect(replayed.every((d) => verifyDelivery(d, secret))).toBe(true);
    await waitFor(
      'both delivered',
      async () => (await eventOf(id, first)).status === 'success' && (await eventOf(id, second)).status === 'success',
    );
    const attempts = (await call('GET', `/webhooks/${id}/events/${first}/attempts`)).body.data!;
    expect(attempts.filter((a) => a.replay)).toHaveLength(1);
    // Asked again, nothing is failed any more: nothing is sent.
    expect((await call('POST', `/webhooks/${id}/events/replay`, { since, status: 'failed' })).body.replayed).toBe(0);
  });

  it('refuses a malformed body, a disabled endpoint and another team’s endpoint', async () => {
    const { id } = await endpoint();
    const since = new Date().toISOString();
    for (const [body, name] of [
      [{ status: 'failed' }, 'missing_required_field'],
      [{ since: 'yesterday', status: 'failed' }, 'validation_error'],
      [{ since, status: 'success' }, 'validation_error'],
      [{ since }, 'missing_required_field'],
    ] as const) {
      const r = await call('POST', `/webhooks/${id}/events/replay`, body);
      expect([r.status, r.body.name]).toEqual([422, name]);
    }
    expect((await call('POST', `/webhooks/${id}/events/replay`, { since, status: 'failed' }, otherKey)).status).toBe(
      404,
    );
    await call('PATCH', `/webhooks/${id}`, { status: 'disabled' });
    expect((await call('POST', `/webhooks/${id}/events/replay`, { since, status: 'failed' })).status).toBe(422);
  });
});
