// The pages of an endpoint's events and of an event's attempts (GET /webhooks/{id}/events[/{event}/attempts])
// through the real gateway, webhook-dispatcher and sender: keyset `after` and `before` on the event and
// attempt ids, both together refused as on every list; the events of one delivery state (Postline's `status`
// filter, for the dashboard). Events come from contacts created with the resend SDK. Also the endpoint's
// Postline fields: until when the previous secret signs after a rotation, and why it is disabled.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import {
  dataOf,
  startWebhookReceiver,
  testResend,
  useSystem,
  waitFor,
  type SharedSystem,
  type WebhookReceiver,
} from '@postline/testing';

jest.setTimeout(60_000);

let system: SharedSystem;
let resend: Resend;
let apiKey: string;
let receiver: WebhookReceiver;

const world = useSystem();

beforeAll(async () => {
  system = world.system;
  const team = await system.admin('team', 'create', '--name', 'Event pages');
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  receiver = await startWebhookReceiver();
}, 60_000);

afterAll(async () => {
  await receiver?.close();
}, 30_000);

/** A JSON answer: a list page, an item or an error (tests read what they expect of it). */
type Body = Record<string, unknown> & { data: ({ id: string } & Record<string, unknown>)[]; has_more: boolean };

async function call(path: string, method = 'GET', body?: unknown): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

describe('GET /webhooks/deliveries', () => {
  it("tells where an email's events went, each linked to its attempts; another team's are not listed", async () => {
    const hook = dataOf(
      await resend.webhooks.create({ endpoint: `${receiver.url}/by-email`, events: ['email.sent', 'email.delivered'] }),
    );
    try {
      // The onboarding sender to a sandbox address: delivered without any domain or MX.
      const email = dataOf(
        await resend.emails.send({
          from: 'onboarding@postline.test',
          to: 'delivered@postline.test',
          subject: 'Hooks',
          text: 'Hi',
        }),
      );
      await receiver.waitFor(
        "the email's two events",
        (ds) => ds.filter((d) => d.path.endsWith('/by-email') && d.json.data.email_id === email.id).length === 2,
      );
      const events = (await call(`/emails/${email.id}/events`)).body.data;
      expect(events.map((e) => e.type)).toEqual(['email.sent', 'email.delivered']);
      let deliveries: Body['data'] = [];
      await waitFor('both deliveries recorded as done', async () => {
        deliveries = (await call(`/webhooks/deliveries?source_event_id=${events.map((e) => e.id).join(',')}`)).body
          .data;
        return deliveries.length === 2 && deliveries.every((d) => d.status === 'success');
      });
      expect(deliveries).toEqual(
        events.map((e) =>
          expect.objectContaining({
            webhook_id: hook.id,
            endpoint: `${receiver.url}/by-email`,
            source_event_id: e.id,
            type: e.type,
            attempts: 1,
          }),
        ),
      );
      const attempts = await call(`/webhooks/${hook.id}/events/${deliveries[0]!.id}/attempts`);
      expect(attempts.body.data).toEqual([expect.objectContaining({ http_status_code: 200 })]);

      const other = String((await system.admin('team', 'create', '--name', 'Not these')).api_key);
      const theirs = await fetch(`${system.apiUrl}/webhooks/deliveries?source_event_id=${events[0]!.id}`, {
        headers: { authorization: `Bearer ${other}` },
      });
      expect(await theirs.json()).toEqual({ object: 'list', data: [] });
      for (const query of ['', '?source_event_id=nope', `?source_event_id=${events[0]!.id},x`]) {
        const bad = await call(`/webhooks/deliveries${query}`);
        expect(bad.status).toBe(422);
      }
    } finally {
      await resend.webhooks.remove(hook.id);
    }
  });
});

describe('GET /webhooks/{id}/events and its attempts', () => {
  it('page with after or before, and refuse both together', async () => {
    const hook = dataOf(
      await resend.webhooks.create({ endpoint: `${receiver.url}/pages`, events: ['contact.created'] }),
    );
    try {
      for (let i = 0; i < 3; i++) {
        dataOf(await resend.contacts.create({ email: `page-${Date.now().toString(36)}-${i}@example.com` }));
      }
      await receiver.waitFor('three contact.created', (ds) => ds.length >= 3);
      // Each event is recorded with its first attempt, which may come after the delivery.
      let ids: string[] = [];
      await waitFor('three events recorded', async () => {
        const all = await call(`/webhooks/${hook.id}/events`);
        expect(all.status).toBe(200);
        ids = all.body.data.map((event) => event.id);
        return ids.length === 3;
      });
      const [newest, middle, oldest] = ids as [string, string, string];

      expect((await call(`/webhooks/${hook.id}/events?after=${newest}&limit=1`)).body).toMatchObject({
        has_more: true,
        data: [{ id: middle }],
      });
      const newer = await call(`/webhooks/${hook.id}/events?before=${oldest}`);
      expect(newer.body.data.map((event) => event.id)).toEqual([newest, middle]);
      expect((await call(`/webhooks/${hook.id}/events?before=${middle}&limit=1`)).body).toMatchObject({
        has_more: false,
        data: [{ id: newest }],
      });

      const both = await call(`/webhooks/${hook.id}/events?after=${newest}&before=${oldest}`);
      expect(both).toEqual({
        status: 422,
        body: {
          statusCode: 422,
          name: 'validation_error',
          message: expect.stringContaining('The `after` and `before` parameters cannot be used together.'),
        },
      });
      expect((await call(`/webhooks/${hook.id}/events?before=not-an-id`)).status).toBe(422);

      // Filtered by delivery state: all three were delivered, none failed; an unknown state is refused.
      const delivered = await call(`/webhooks/${hook.id}/events?status=success&limit=2`);
      expect(delivered.body).toMatchObject({ has_more: true, data: [{ id: newest }, { id: middle }] });
      expect((await call(`/webhooks/${hook.id}/events?status=success&after=${middle}`)).body.data).toEqual([
        expect.objectContaining({ id: oldest, status: 'success' }),
      ]);
      expect((await call(`/webhooks/${hook.id}/events?status=failed`)).body).toMatchObject({
        data: [],
        has_more: false,
      });
      expect(await call(`/webhooks/${hook.id}/events?status=lost`)).toEqual({
        status: 422,
        body: {
          statusCode: 422,
          name: 'validation_error',
          message: expect.stringContaining('The `status` parameter must be one of'),
        },
      });

      const attempts = await call(`/webhooks/${hook.id}/events/${newest}/attempts`);
      expect(attempts.status).toBe(200);
      const [attempt] = attempts.body.data;
      expect(attempt?.id).toMatch(/^atmpt_/);
      expect((await call(`/webhooks/${hook.id}/events/${newest}/attempts?before=${attempt?.id}`)).body).toMatchObject({
        data: [],
        has_more: false,
      });
      const bothAttempts = await call(
        `/webhooks/${hook.id}/events/${newest}/attempts?after=${attempt?.id}&before=${attempt?.id}`,
      );
      expect(bothAttempts.status).toBe(422);
      expect(bothAttempts.body.name).toBe('validation_error');
    } finally {
      await resend.webhooks.remove(hook.id);
    }
  });

  it('answer until when the previous secret signs after a rotation, and why an endpoint is disabled', async () => {
    const hook = dataOf(await resend.webhooks.create({ endpoint: `${receiver.url}/fields`, events: ['email.sent'] }));
    try {
      expect((await call(`/webhooks/${hook.id}`)).body).toMatchObject({
        signing_secret: hook.signing_secret,
        previous_secret_expires_at: null,
        disabled_reason: null,
      });
      const before = Date.now();
      const rotated = await call(`/webhooks/${hook.id}/signing-secret/rotate`, 'POST');
      const after = (await call(`/webhooks/${hook.id}`)).body;
      expect(after.signing_secret).toBe(rotated.body.signing_secret);
      // 24 hours from the rotation (this system's schedules are not scaled).
      const until = new Date(String(after.previous_secret_expires_at).replace(' ', 'T').replace(/\+00$/, 'Z'));
      expect(until.getTime()).toBeGreaterThanOrEqual(before + 86_400_000 - 1000);
      expect(until.getTime()).toBeLessThanOrEqual(Date.now() + 86_400_000 + 1000);

      expect((await call(`/webhooks/${hook.id}`, 'PATCH', { status: 'disabled' })).status).toBe(200);
      expect((await call(`/webhooks/${hook.id}`)).body).toMatchObject({
        status: 'disabled',
        disabled_reason: 'disabled through the API',
      });
      expect((await call(`/webhooks/${hook.id}`, 'PATCH', { status: 'enabled' })).status).toBe(200);
      expect((await call(`/webhooks/${hook.id}`)).body).toMatchObject({ status: 'enabled', disabled_reason: null });
    } finally {
      await resend.webhooks.remove(hook.id);
    }
  });
});
