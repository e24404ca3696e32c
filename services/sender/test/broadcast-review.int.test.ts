// Postline's broadcast extensions end to end through the real gateway and services: the review before
// sending (and sending refused on its errors), the preview as one contact, test copies through the send
// pipeline, the results by outcome, and approval of a member's broadcast by an admin (dashboard sessions
// signed in through the gateway, each step in the audit log). The recipients' MX is a local sink.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  observeBroker,
  testResend,
  uniqueDomain,
  useSystem,
  waitFor,
  type BrokerObserver,
  type SharedSystem,
  type SinkMessage,
} from '@postline/testing';

jest.setTimeout(60_000);

const RCPT = uniqueDomain('review');
const MISSING_ID = '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f';
const UNSUBSCRIBE = '<a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a>';

let system: SharedSystem;
let events: BrokerObserver;
let resend: Resend;
let apiKey: string;
let otherKey: string;
let teamId: string;
let domain: string;

const world = useSystem({ rcptDomain: RCPT });

beforeAll(async () => {
  system = world.system;
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const team = await system.admin('team', 'create', '--name', 'Review');
  apiKey = String(team.api_key);
  teamId = String(team.team_id);
  otherKey = String((await system.admin('team', 'create', '--name', 'Other')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns: world.dns, events, name: `${unique('r')}.example.com` })).name;
}, 90_000);

afterAll(async () => {
  await events?.close();
});

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;
const address = (prefix: string) => `${unique(prefix)}@${RCPT}`;

type Answer = { status: number; body: Record<string, unknown> };
type Caller = (method: string, path: string, body?: unknown) => Promise<Answer>;

function caller(headers: Record<string, string>): Caller {
  return async (method, path, body) => {
    const res = await fetch(`${system.apiUrl}${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}

const byKey = () => caller({ authorization: `Bearer ${apiKey}` });

/** A person of the team signed in through the gateway, calling as the dashboard does (cookie and CSRF token). */
async function person(role: 'admin' | 'member'): Promise<{ id: string; call: Caller }> {
  const email = `${unique(role)}@example.com`;
  const made = await system.admin('user', 'create', '--team', teamId, '--email', email, '--name', role, '--role', role);
  const res = await fetch(`${system.apiUrl}/dashboard-api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: String(made.password) }),
  });
  expect(res.status).toBe(201);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const csrf = String(((await res.json()) as { csrf_token: string }).csrf_token);
  return { id: String(made.user_id), call: caller({ cookie, 'x-csrf-token': csrf }) };
}

/** A segment with `emails` as contacts, returned with their ids. */
async function segmentOf(emails: string[], extra: Record<string, object> = {}) {
  const segment = dataOf(await resend.segments.create({ name: unique('seg') })).id;
  const ids: Record<string, string> = {};
  for (const email of emails) {
    ids[email] = dataOf(await resend.contacts.create({ email, segments: [{ id: segment }], ...extra[email] })).id;
  }
  return { segment, ids };
}

function draftBody(segment: string, html: string) {
  return { segment_id: segment, from: `Acme <news@${domain}>`, subject: 'News for {{{contact.first_name|you}}}', html };
}

const levelOf = (review: Answer, check: string) =>
  (review.body.checks as { check: string; level: string; message: string }[]).find((c) => c.check === check);

const sinkFor = (to: string) => world.sink.messages.filter((m: SinkMessage) => m.to.includes(to));

describe('the review before sending', () => {
  it('reviews a broadcast without an unsubscribe link, counts its recipients, refuses a send from another domain, sends once fixed', async () => {
    const plan = unique('plan');
    dataOf(await resend.contactProperties.create({ key: plan, type: 'string', fallbackValue: 'free' }));
    const topic = dataOf(await resend.topics.create({ name: unique('Topic '), defaultSubscription: 'opt_in' })).id;
    const [ada, bob, gone, left, blocked] = ['ada', 'bob', 'gone', 'left', 'blocked'].map(address) as [
      string,
      string,
      string,
      string,
      string,
    ];
    const { segment } = await segmentOf([ada, bob, gone, left, blocked], {
      [ada]: { firstName: 'Ada', properties: { [plan]: 'pro' } },
      [gone]: { unsubscribed: true },
      [left]: { topics: [{ id: topic, subscription: 'opt_out' }] },
    });
    dataOf(await resend.suppressions.add({ email: blocked }));
    const call = byKey();
    const created = await call('POST', '/broadcasts', {
      ...draftBody(segment, `<p>Hi {{{contact.first_name}}}, plan {{{contact.${plan}}}} {{{contact.nothing}}}</p>`),
      topic_id: topic,
    });
    const id = String(created.body.id);

    const review = await call('GET', `/broadcasts/${id}/review`);
    expect(review.status).toBe(200);
    expect(review.body).toMatchObject({ object: 'broadcast_review', id, status: 'draft', can_send: false });
    // ada and bob; gone unsubscribed, left opted out of the topic, blocked suppressed.
    expect(review.body).toMatchObject({ recipients: 2, suppressed: 1 });
    expect(levelOf(review, 'from_domain')?.level).toBe('ok');
    expect(levelOf(review, 'unsubscribe_link')?.level).toBe('error');
    expect(levelOf(review, 'placeholders')).toMatchObject({ level: 'warning' });
    expect(levelOf(review, 'placeholders')?.message).toContain('{{{contact.nothing}}}');
    expect(levelOf(review, 'html_size')?.level).toBe('ok');

    // Any other error refuses the API's send too: here a From on a domain the team does not have.
    dataOf(await resend.broadcasts.update(id, { from: 'Acme <news@not-ours.example.com>' }));
    const refused = await resend.broadcasts.send(id);
    expect(refused.error).toMatchObject({ statusCode: 403 });
    expect(dataOf(await resend.broadcasts.get(id)).status).toBe('draft');
    dataOf(await resend.broadcasts.update(id, { from: `Acme <news@${domain}>` }));

    dataOf(
      await resend.broadcasts.update(id, {
        html: `<p>Hi {{{contact.first_name|you}}}, {{{contact.${plan}}}} ${UNSUBSCRIBE}</p>`,
      }),
    );
    const fixed = await call('GET', `/broadcasts/${id}/review`);
    expect(fixed.body).toMatchObject({ can_send: true, recipients: 2 });
    expect(levelOf(fixed, 'placeholders')?.level).toBe('ok');
    dataOf(await resend.broadcasts.send(id));
    await waitFor('both at the sink', () => sinkFor(ada).length === 1 && sinkFor(bob).length === 1, 30_000);
    for (const none of [gone, left, blocked]) expect(sinkFor(none)).toHaveLength(0);

    await waitFor(
      'both delivered in the results',
      async () => (await call('GET', `/broadcasts/${id}/results`)).body.delivered === 2,
      30_000,
    );
    expect((await call('GET', `/broadcasts/${id}/results`)).body).toMatchObject({
      object: 'broadcast_results',
      id,
      status: 'sent',
      sent: 2,
      delivered: 2,
      opened: { people: 0, machines: 0 },
      clicked: { people: 0, scanners: 0 },
      unsubscribed: 0,
      bounced: 0,
      complained: 0,
      suppressed: 1,
    });
  });
});

describe('an API client without the review', () => {
  it('sends a broadcast without an unsubscribe link, as Resend does, each message with one-click headers', async () => {
    const lin = address('lin');
    const { segment } = await segmentOf([lin]);
    const call = byKey();
    const sent = await call('POST', '/broadcasts', { ...draftBody(segment, '<p>No link here</p>'), send: true });
    expect(sent.status).toBe(201);
    const review = await call('GET', `/broadcasts/${String(sent.body.id)}/review`);
    expect(levelOf(review, 'unsubscribe_link')?.level).toBe('error');
    await waitFor('the message at the sink', () => sinkFor(lin).length === 1, 30_000);
    const raw = sinkFor(lin)[0]!.raw.toString('utf8');
    expect(raw).toMatch(/^List-Unsubscribe:\s+<https?:\/\/[^>]+\/unsubscribe\/[^>]+>/m);
    expect(raw).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
  });
});

describe('the preview and test copies', () => {
  it('shows the broadcast as one contact gets it and sends test copies that the results do not count', async () => {
    const grace = address('grace');
    const { segment, ids } = await segmentOf([grace], { [grace]: { firstName: 'Grace', lastName: 'Hopper' } });
    const call = byKey();
    const id = String(
      (
        await call(
          'POST',
          '/broadcasts',
          draftBody(segment, `<p>Dear {{{contact.last_name|friend}}} ${UNSUBSCRIBE}</p>`),
        )
      ).body.id,
    );
    const preview = await call('GET', `/broadcasts/${id}/preview?contact_id=${ids[grace]}`);
    expect(preview.body).toMatchObject({
      object: 'broadcast_preview',
      id,
      contact_id: ids[grace],
      email: grace,
      subject: 'News for Grace',
      text: null,
    });
    const link = /href="([^"]+)"/.exec(String(preview.body.html))?.[1] ?? '';
    expect(link).toMatch(/\/unsubscribe\/[A-Za-z0-9_-]{64}\.[A-Za-z0-9_-]{22}$/);
    expect(String(preview.body.html)).toContain('Dear Hopper');
    expect((await call('GET', `/broadcasts/${id}/preview?email=${encodeURIComponent(grace)}`)).body.contact_id).toBe(
      ids[grace],
    );
    // The link is the contact's own: its preference page opens.
    expect((await fetch(link)).status).toBe(200);

    const tester = address('tester');
    const sent = await call('POST', `/broadcasts/${id}/test`, { to: [tester], contact_id: ids[grace] });
    expect(sent.status).toBe(200);
    const [copy] = sent.body.data as { id: string; to: string }[];
    expect(copy?.to).toBe(tester);
    await waitFor('the test copy at the sink', () => sinkFor(tester).length === 1, 30_000);
    expect(sinkFor(tester)[0]?.raw.toString('utf8')).toContain('Subject: [Test] News for Grace');
    const email = dataOf(await resend.emails.get(copy?.id ?? ''));
    expect(email.tags).toEqual([{ name: 'broadcast_test', value: id }]);
    expect((await call('GET', `/broadcasts/${id}/results`)).body).toMatchObject({ sent: 0, delivered: 0 });
    expect(dataOf(await resend.broadcasts.get(id)).status).toBe('draft');
    // Grace's fields, not her unsubscribe link: the tester cannot unsubscribe her.
    const html = (email.html ?? '').replaceAll('&amp;', '&');
    const testLink = /href="([^"]+\/unsubscribe\/[^"]+)"/.exec(html)?.[1] ?? '';
    expect(testLink).not.toBe('');
    expect(testLink).not.toBe(link);
    await fetch(testLink, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) });
    expect(dataOf(await resend.contacts.get({ id: ids[grace]! })).unsubscribed).toBe(false);
  });
});

describe('approval before send', () => {
  it("holds a member's broadcast for an admin, who rejects then approves it; each step is in the audit log", async () => {
    const member = await person('member');
    const admin = await person('admin');
    expect(await member.call('PATCH', '/broadcasts/settings', { require_approval: true })).toMatchObject({
      status: 403,
      body: { name: 'invalid_permission' },
    });
    expect(await admin.call('PATCH', '/broadcasts/settings', { require_approval: true })).toMatchObject({
      status: 200,
      body: { object: 'broadcast_settings', require_approval: true },
    });
    expect((await member.call('GET', '/broadcasts/settings')).body.require_approval).toBe(true);
    try {
      const reader = address('reader');
      const { segment } = await segmentOf([reader]);
      const created = await member.call('POST', '/broadcasts', draftBody(segment, `<p>News ${UNSUBSCRIBE}</p>`));
      const id = String(created.body.id);

      expect(await member.call('POST', `/broadcasts/${id}/send`, { scheduled_at: 'in 1 hour' })).toMatchObject({
        status: 200,
      });
      const waiting = dataOf(await resend.broadcasts.get(id)) as unknown as Record<string, unknown>;
      expect(waiting).toMatchObject({
        status: 'awaiting_approval',
        scheduled_at: null,
        approval: { requested_by: member.id, scheduled_at: expect.any(String) },
      });
      expect(await member.call('POST', `/broadcasts/${id}/approve`)).toMatchObject({
        status: 403,
        body: { name: 'invalid_permission' },
      });
      expect(await admin.call('POST', `/broadcasts/${id}/reject`, { reason: 'Not this week' })).toMatchObject({
        status: 200,
        body: { object: 'broadcast', id, status: 'draft' },
      });
      expect(dataOf(await resend.broadcasts.get(id))).toMatchObject({
        status: 'draft',
        approval: null,
        rejection: { rejected_by: admin.id, reason: 'Not this week' },
      });
      expect(await admin.call('POST', `/broadcasts/${id}/approve`)).toMatchObject({ status: 403 });

      // Asked again for now, approved: it goes.
      await member.call('POST', `/broadcasts/${id}/send`);
      expect(dataOf(await resend.broadcasts.get(id)).status).toBe('awaiting_approval');
      expect(await admin.call('POST', `/broadcasts/${id}/approve`)).toMatchObject({
        status: 200,
        body: { object: 'broadcast', id, status: 'queued' },
      });
      await waitFor('the approved broadcast at the sink', () => sinkFor(reader).length === 1, 30_000);
      expect(dataOf(await resend.broadcasts.get(id))).toMatchObject({ status: 'sent', rejection: null });

      // Approved for later, it is sent as approved: the member may rename it, not change what it says.
      const later = await member.call('POST', '/broadcasts', draftBody(segment, `<p>Later ${UNSUBSCRIBE}</p>`));
      const laterId = String(later.body.id);
      await member.call('POST', `/broadcasts/${laterId}/send`, { scheduled_at: 'in 2 hours' });
      expect(await admin.call('POST', `/broadcasts/${laterId}/approve`)).toMatchObject({
        status: 200,
        body: { status: 'scheduled' },
      });
      expect(
        await member.call('PATCH', `/broadcasts/${laterId}`, { html: `<p>Changed ${UNSUBSCRIBE}</p>` }),
      ).toMatchObject({ status: 403, body: { name: 'invalid_permission' } });
      expect((await member.call('PATCH', `/broadcasts/${laterId}`, { name: 'Renamed' })).status).toBe(200);
      expect(dataOf(await resend.broadcasts.get(laterId))).toMatchObject({
        status: 'scheduled',
        name: 'Renamed',
        html: `<p>Later ${UNSUBSCRIBE}</p>`,
      });
      expect((await admin.call('PATCH', `/broadcasts/${laterId}`, { subject: 'Checked by an admin' })).status).toBe(
        200,
      );
      dataOf(await resend.broadcasts.cancel(laterId));

      // An admin's own broadcast, and an API key's, go without approval.
      const own = await admin.call('POST', '/broadcasts', {
        ...draftBody(segment, `<p>Own ${UNSUBSCRIBE}</p>`),
        send: true,
      });
      expect(dataOf(await resend.broadcasts.get(String(own.body.id))).status).not.toBe('awaiting_approval');

      const log = await byKey()('GET', `/audit-log?target_id=${id}`);
      const entries = (log.body.data as { action: string; actor: { id: string } }[]).map((e) => [e.action, e.actor.id]);
      expect(entries).toEqual(
        expect.arrayContaining([
          ['broadcasts.send', member.id],
          ['broadcasts.reject', admin.id],
          ['broadcasts.approve', admin.id],
        ]),
      );
      const settings = await byKey()('GET', '/audit-log?action=broadcasts.settings_updated');
      expect((settings.body.data as { actor: { id: string } }[]).map((e) => e.actor.id)).toContain(admin.id);
    } finally {
      await byKey()('PATCH', '/broadcasts/settings', { require_approval: false });
    }
  });
});

describe("another team's broadcasts and bad input", () => {
  it("answers 404 for another team's ids and 422 JSON errors for bad input", async () => {
    const reader = address('x');
    const { segment, ids } = await segmentOf([reader]);
    const call = byKey();
    const id = String((await call('POST', '/broadcasts', draftBody(segment, `<p>${UNSUBSCRIBE}</p>`))).body.id);
    const other = caller({ authorization: `Bearer ${otherKey}` });
    for (const [method, path, body] of [
      ['GET', `/broadcasts/${id}/review`],
      ['GET', `/broadcasts/${id}/preview?contact_id=${ids[reader]}`],
      ['POST', `/broadcasts/${id}/test`, { to: [reader] }],
      ['POST', `/broadcasts/${id}/approve`],
      ['POST', `/broadcasts/${id}/reject`, {}],
      ['GET', `/broadcasts/${id}/results`],
    ] as [string, string, unknown][]) {
      expect(await other(method, path, body)).toMatchObject({ status: 404, body: { name: 'not_found' } });
    }
    expect(await call('GET', `/broadcasts/${MISSING_ID}/review`)).toMatchObject({ status: 404 });
    expect(await call('GET', `/broadcasts/${id}/preview?contact_id=${MISSING_ID}`)).toMatchObject({
      status: 404,
      body: { message: 'Contact not found' },
    });
    expect(await call('GET', `/broadcasts/${id}/preview`)).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('POST', `/broadcasts/${id}/test`, { to: [] })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('POST', `/broadcasts/${id}/test`, { to: 'not an address' })).toMatchObject({ status: 422 });
    // The list by status (a Postline filter): the draft among the drafts, not among the sent.
    const listed = async (status: string) =>
      ((await call('GET', `/broadcasts?status=${status}&limit=100`)).body.data as { id: string }[]).map((b) => b.id);
    expect(await listed('draft')).toContain(id);
    expect(await listed('sent')).not.toContain(id);
    expect(await call('GET', '/broadcasts?status=nope')).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('PATCH', '/broadcasts/settings', { require_approval: 'yes' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('POST', `/broadcasts/${id}/reject`, { reason: 'x'.repeat(1001) })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('POST', `/broadcasts/${id}/approve`)).toMatchObject({
      status: 403,
      body: { name: 'validation_error', message: 'Only a broadcast awaiting approval can be approved.' },
    });
  });
});
