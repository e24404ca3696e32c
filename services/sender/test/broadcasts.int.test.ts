// Broadcasts end to end: the official resend SDK's broadcasts namespace through the real gateway and the
// real services; the recipients' MX is a local smtp-server sink. A broadcast goes to its segment's contacts
// minus the unsubscribed, those opted out of its topic and suppressed addresses, each once, personalised,
// with RFC 8058 one-click headers under the DKIM signature. The sender's tables are read only for what the
// API does not show (the emails a broadcast made, and its recipients' states).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { Resend } from 'resend';
import {
  dataOf,
  createVerifiedDomain,
  observeBroker,
  waitFor,
  makeTimerDue,
  type BrokerObserver,
  type DnsServer,
  type SinkMessage,
  type SinkMx,
  type SharedSystem,
  uniqueDomain,
  useSystem,
  testResend,
} from '@postline/testing';
import { createDb } from '@postline/platform';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';

jest.setTimeout(60_000);

const RCPT = uniqueDomain('rcpt');
const MISSING_ID = '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f';

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let db: Kysely<SenderDb>;
let resend: Resend;
let other: Resend;
let teamId: string;
let domain: string;
let dkimRecord: string;
let apiKey: string;

const world = useSystem({ rcptDomain: RCPT });

beforeAll(async () => {
  ({ dns, sink, system } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA }).db;
  const team = await system.admin('team', 'create', '--name', 'Broadcasts');
  apiKey = String(team.api_key);
  teamId = String(team.team_id);
  resend = testResend(apiKey, system.apiUrl);
  other = testResend(String((await system.admin('team', 'create', '--name', 'Other')).api_key), system.apiUrl);
  const verified = await createVerifiedDomain({ resend, dns, events, name: `${unique('b')}.example.com` });
  domain = verified.name;
  dkimRecord = verified.dkimRecord;
}, 90_000);

afterAll(async () => {
  await db?.destroy();
  await events?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;
const address = (prefix: string) => `${unique(prefix)}@${RCPT}`;

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'user-agent': 'test' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

type CreateOptions = Parameters<Resend['broadcasts']['create']>[0];

function draft(segmentId: string, options: Partial<CreateOptions> = {}): CreateOptions {
  return {
    segmentId,
    from: `Acme <news@${domain}>`,
    subject: 'News for {{{contact.first_name|there}}}',
    html: '<p>Hi {{{contact.first_name|there}}} {{{LAST_NAME}}}, plan {{{contact.plan}}}. <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
    text: 'Hi {{{FIRST_NAME|there}}}: {{{EMAIL}}} {{{POSTLINE_UNSUBSCRIBE_URL}}}',
    ...options,
  } as CreateOptions;
}

async function status(id: string): Promise<string> {
  return dataOf(await resend.broadcasts.get(id)).status;
}

async function sentTo(broadcastId: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from broadcast_recipients
    where broadcast_id = ${broadcastId}::uuid and email_id is not null`.execute(db);
  return Number(rows[0]?.n);
}

/**
 * A segment of `count` contacts at `<prefix><tag>-<n>@<at>`, inserted with SQL as the benchmarks do (the
 * audience's own tests cover the API that writes them).
 */
async function bigSegment(count: number, prefix: string, at: string): Promise<{ segmentId: string; tag: string }> {
  const segmentId = dataOf(await resend.segments.create({ name: unique('big') })).id;
  const tag = unique('c');
  await sql`with made as (
      insert into contacts (id, team_id, email, first_name, properties, created_at, updated_at)
      select (lpad(to_hex(1700000000000 + n), 12, '0') || '7' || substr(md5(${tag} || n), 1, 3) || '8' || substr(md5(${tag} || n), 4, 15))::uuid,
        ${teamId}::uuid, ${prefix} || ${tag} || '-' || n || '@' || ${at}, 'Contact ' || n, '{}', now(), now()
      from generate_series(1, ${count}) as n
      returning id)
    insert into contact_segments (segment_id, contact_id, team_id) select ${segmentId}::uuid, id, ${teamId}::uuid from made`.execute(
    db,
  );
  return { segmentId, tag };
}

/** The message with quoted-printable soft breaks and `=3D` undone (enough for these bodies). */
function decoded(message: SinkMessage): string {
  return message.raw.toString('utf8').replace(/=\r\n/g, '').replace(/=3D/g, '=');
}

function header(message: SinkMessage, name: string): string | undefined {
  const head = message.raw.toString('utf8').split('\r\n\r\n')[0] ?? '';
  const unfolded = head.replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: (.*)$`, 'im').exec(unfolded)?.[1];
}

describe('a broadcast to a segment through a real MX', () => {
  it('sends each wanted contact one personalised, DKIM-signed message with one-click unsubscribe headers', async () => {
    const plan = unique('plan');
    dataOf(await resend.contactProperties.create({ key: plan, type: 'string', fallbackValue: 'free' }));
    const segment = dataOf(await resend.segments.create({ name: unique('news') })).id;
    const topic = dataOf(await resend.topics.create({ name: unique('Topic '), defaultSubscription: 'opt_in' })).id;
    const ada = address('ada');
    const anonymous = address('anon');
    const unsubscribed = address('unsub');
    const optedOut = address('optout');
    const suppressed = address('supp');
    const outsider = address('outside');
    const contactIds: Record<string, string> = {};
    type Extra = {
      firstName?: string;
      lastName?: string;
      unsubscribed?: boolean;
      properties?: Record<string, string>;
      topics?: { id: string; subscription: 'opt_in' | 'opt_out' }[];
    };
    const contacts: [string, Extra][] = [
      [ada, { firstName: 'Ada <Lovelace>', lastName: 'King', properties: { [plan]: 'pro' } }],
      [anonymous, {}],
      [unsubscribed, { unsubscribed: true }],
      [optedOut, { topics: [{ id: topic, subscription: 'opt_out' }] }],
      [suppressed, {}],
    ];
    for (const [email, extra] of contacts) {
      contactIds[email] = dataOf(await resend.contacts.create({ email, segments: [{ id: segment }], ...extra })).id;
    }
    dataOf(await resend.contacts.create({ email: outsider }));
    dataOf(await resend.suppressions.add({ email: suppressed }));

    const html = draft(segment).html!.replace('{{{contact.plan}}}', `{{{contact.${plan}}}}`);
    const { id } = dataOf(
      await resend.broadcasts.create({
        ...draft(segment, { html, topicId: topic, previewText: 'Inside: news' }),
        send: true,
      }),
    );
    await waitFor('the broadcast sent', async () => (await status(id)) === 'sent', 30_000);
    await waitFor(
      'two messages at the sink',
      () => sink.messages.filter((m) => m.to.includes(ada) || m.to.includes(anonymous)).length === 2,
      30_000,
    );

    const reached = new Set(sink.messages.flatMap((m) => m.to));
    for (const left of [unsubscribed, optedOut, suppressed, outsider]) expect(reached.has(left)).toBe(false);
    const toAda = sink.messages.filter((m) => m.to.includes(ada));
    expect(toAda).toHaveLength(1);
    const message = toAda[0] as SinkMessage;
    const raw = decoded(message);
    expect(header(message, 'Subject')).toBe('News for Ada <Lovelace>');
    expect(raw).toContain('Hi Ada &lt;Lovelace&gt; King, plan pro.');
    expect(raw).toContain('Inside: news');
    const anonymousMessage = sink.messages.find((m) => m.to.includes(anonymous));
    const anonymousRaw = anonymousMessage ? decoded(anonymousMessage) : '';
    expect(anonymousRaw).toContain('Hi there , plan free.');

    const listUnsubscribe = header(message, 'List-Unsubscribe') ?? '';
    const link = /<(https?:[^>]+)>/.exec(listUnsubscribe)?.[1] ?? '';
    const publicBaseUrl = String(system.env.PUBLIC_BASE_URL).replaceAll('.', '\\.');
    expect(link).toMatch(new RegExp(`^${publicBaseUrl}/unsubscribe/[A-Za-z0-9_-]{64}\\.[A-Za-z0-9_-]{22}$`));
    expect(listUnsubscribe).toMatch(
      new RegExp(`<mailto:unsubscribe@send\\.${domain.replaceAll('.', '\\.')}\\?subject=`),
    );
    expect(header(message, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    // {{{RESEND_UNSUBSCRIBE_URL}}} and {{{POSTLINE_UNSUBSCRIBE_URL}}} are the same link.
    expect(raw).toContain(`<a href="${link}">`);
    expect(raw).toContain(`${ada} ${link}`);

    const signature = (header(message, 'DKIM-Signature') ?? '').replace(/\s+/g, '');
    const signed = (/h=([^;]+)/.exec(signature)?.[1] ?? '').toLowerCase().split(':');
    expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']));
    const selector = /s=([^;\s]+)/.exec(signature)?.[1];
    const verified = await dkimVerify(message.raw, {
      resolver: (name: string, type: string) =>
        type === 'TXT' && name === `${selector}._domainkey.${domain}`
          ? Promise.resolve([[dkimRecord]])
          : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
    });
    expect(verified.results[0]?.status.result).toBe('pass');

    const sent = dataOf(await resend.broadcasts.recipients(id, { type: 'sent' }));
    expect(sent.data.map((r) => r.email).sort()).toEqual([ada, anonymous].sort());
    expect(sent.data.find((r) => r.email === ada)?.contact_id).toBe(contactIds[ada]);
    const supp = dataOf(await resend.broadcasts.recipients(id, { type: 'suppressed' }));
    expect(supp.data.map((r) => r.email)).toEqual([suppressed]);
    expect(dataOf(await resend.broadcasts.recipients(id, { type: 'opened' })).data).toEqual([]);
    expect(dataOf(await resend.broadcasts.clickedLinks(id)).data).toEqual([]);
    await waitFor(
      'both delivered',
      async () => dataOf(await resend.broadcasts.recipients(id, { type: 'delivered' })).data.length === 2,
      30_000,
    );

    // Ada follows the one-click link: the unsubscribe is counted against the broadcast, and against the
    // domain and the mailbox provider of the email that carried the link.
    expect(
      (await fetch(link, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) })).status,
    ).toBe(200);
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const counted = async (dimensions: string) => {
      const query = new URLSearchParams({ start_date: day(-1), end_date: day(1), dimensions, metrics: 'unsubscribed' });
      const r = await fetch(`${system.apiUrl}/emails/metrics?${query.toString()}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      return ((await r.json()) as { data: Record<string, unknown>[] }).data.filter((row) => row.unsubscribed !== 0);
    };
    // Counters are folded every few seconds.
    await waitFor('the unsubscribe counted', async () => (await counted('broadcast')).length === 1, 30_000);
    expect(await counted('broadcast')).toEqual([expect.objectContaining({ broadcast_id: id, unsubscribed: 1 })]);
    expect(await counted('domain')).toEqual([expect.objectContaining({ domain_name: domain, unsubscribed: 1 })]);
    expect(await counted('provider')).toEqual([{ provider: 'other', unsubscribed: 1 }]);

    const got = dataOf(await resend.broadcasts.get(id));
    expect(got).toMatchObject({
      object: 'broadcast',
      id,
      segment_id: segment,
      audience_id: segment,
      topic_id: topic,
      status: 'sent',
      preview_text: 'Inside: news',
    });
    expect(got.sent_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/);
    // Sent: only the name may change.
    dataOf(await resend.broadcasts.update(id, { name: 'Renamed' }));
    expect((await resend.broadcasts.update(id, { subject: 'Other' })).error).toMatchObject({
      name: 'validation_error',
      statusCode: 403,
    });
    expect((await resend.broadcasts.cancel(id)).error).toMatchObject({
      name: 'validation_error',
      statusCode: 403,
      message: 'Only queued or scheduled broadcasts can be canceled',
    });
    expect((await resend.broadcasts.remove(id)).error).toMatchObject({ statusCode: 403 });
  });
});

describe('drafts, schedules and their API', () => {
  it('creates, reads, lists, updates and deletes a draft; another team sees none of it', async () => {
    const segment = dataOf(await resend.segments.create({ name: unique('drafts') })).id;
    const { id } = dataOf(
      await resend.broadcasts.create({ ...draft(segment), name: 'Draft', replyTo: 'reply@example.com' }),
    );
    const got = dataOf(await resend.broadcasts.get(id));
    expect(got).toMatchObject({
      object: 'broadcast',
      id,
      name: 'Draft',
      status: 'draft',
      from: `Acme <news@${domain}>`,
      reply_to: ['reply@example.com'],
      segment_id: segment,
      scheduled_at: null,
      sent_at: null,
      topic_id: null,
    });
    dataOf(await resend.broadcasts.update(id, { subject: 'Changed', audienceId: segment }));
    expect(dataOf(await resend.broadcasts.get(id)).subject).toBe('Changed');
    const list = dataOf(await resend.broadcasts.list());
    expect(list.data.find((item) => item.id === id)).toMatchObject({
      id,
      name: 'Draft',
      status: 'draft',
      segment_id: segment,
    });

    expect((await other.broadcasts.get(id)).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
      message: 'Broadcast not found',
    });
    expect((await other.broadcasts.send(id)).error).toMatchObject({ statusCode: 404 });
    expect((await other.broadcasts.remove(id)).error).toMatchObject({ statusCode: 404 });
    expect((await other.broadcasts.recipients(id, { type: 'sent' })).error).toMatchObject({ statusCode: 404 });
    expect((await resend.broadcasts.cancel(id)).error).toMatchObject({
      statusCode: 403,
      message: 'Only queued or scheduled broadcasts can be canceled',
    });

    expect(dataOf(await resend.broadcasts.remove(id))).toEqual({ object: 'broadcast', id, deleted: true });
    expect((await resend.broadcasts.get(id)).error).toMatchObject({ statusCode: 404 });
  });

  it('refuses bad input with the reference errors and writes nothing', async () => {
    const segment = dataOf(await resend.segments.create({ name: unique('bad') })).id;
    expect(await call('POST', '/broadcasts', { from: `a@${domain}`, subject: 's', html: 'h' })).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'Missing `segment_id` field.' },
    });
    expect(await call('POST', '/broadcasts', { segment_id: segment, subject: 's', html: 'h' })).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'Missing `from` field.' },
    });
    expect(
      await call('POST', '/broadcasts', { segment_id: segment, from: 'nope', subject: 's', html: 'h' }),
    ).toMatchObject({ status: 422, body: { name: 'invalid_parameter' } });
    expect(
      await call('POST', '/broadcasts', { segment_id: MISSING_ID, from: `a@${domain}`, subject: 's', html: 'h' }),
    ).toMatchObject({ status: 404 });
    expect(
      await call('POST', '/broadcasts', {
        segment_id: segment,
        from: `a@${domain}`,
        subject: 's',
        html: 'h',
        topic_id: MISSING_ID,
      }),
    ).toMatchObject({ status: 404, body: { message: 'Topic not found' } });
    expect(
      await call('POST', '/broadcasts', {
        segment_id: segment,
        from: `a@${domain}`,
        subject: 's',
        html: 'h',
        scheduled_at: 'in 1 hour',
      }),
    ).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    expect(
      await call('POST', '/broadcasts', {
        segment_id: segment,
        from: 'a@unverified.example.com',
        subject: 's',
        html: 'h',
        send: true,
      }),
    ).toMatchObject({ status: 403, body: { name: 'validation_error' } });
    expect(await call('GET', `/broadcasts/${MISSING_ID}/recipients`)).toMatchObject({
      status: 422,
      body: { name: 'missing_required_parameter' },
    });
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from broadcasts where segment_id = ${segment}::uuid`.execute(db);
    expect(rows[0]?.n).toBe('0');
  });

  it('schedules a broadcast, cancels it back to draft, and sends it when its time comes', async () => {
    const to = address('sched');
    const segment = dataOf(await resend.segments.create({ name: unique('sched') })).id;
    dataOf(await resend.contacts.create({ email: to, firstName: 'Grace', segments: [{ id: segment }] }));
    const { id } = dataOf(await resend.broadcasts.create({ ...draft(segment), send: true, scheduledAt: 'in 1 hour' }));
    const scheduled = dataOf(await resend.broadcasts.get(id));
    expect(scheduled.status).toBe('scheduled' as never);
    expect(scheduled.scheduled_at).not.toBeNull();
    dataOf(await resend.broadcasts.cancel(id));
    expect(dataOf(await resend.broadcasts.get(id))).toMatchObject({ status: 'draft', scheduled_at: null });

    dataOf(await resend.broadcasts.send(id, { scheduledAt: new Date(Date.now() + 1500).toISOString() }));
    expect(await status(id)).toBe('scheduled');
    await waitFor('the scheduled broadcast sent', async () => (await status(id)) === 'sent', 30_000);
    await waitFor('its message at the sink', () => sink.messages.some((m) => m.to.includes(to)), 30_000);
    expect(header(sink.messages.find((m) => m.to.includes(to)) as SinkMessage, 'Subject')).toBe('News for Grace');
  });
});

describe('a broadcast that can no longer be sent', () => {
  it('takes an empty PATCH as no change, and cancels at fire time a scheduled broadcast whose from was moved to an unverified domain', async () => {
    const to = address('moved');
    const segment = dataOf(await resend.segments.create({ name: unique('moved') })).id;
    dataOf(await resend.contacts.create({ email: to, segments: [{ id: segment }] }));
    // Scheduled from the verified domain (checked at send), then moved while scheduled.
    const { id } = dataOf(await resend.broadcasts.create({ ...draft(segment), send: true, scheduledAt: 'in 1 hour' }));
    expect(await call('PATCH', `/broadcasts/${id}`, {})).toMatchObject({
      status: 200,
      body: { id, object: 'broadcast' },
    });
    expect(await call('PATCH', `/broadcasts/${id}`, { from: 'Acme <news@not-verified.example.com>' })).toMatchObject({
      status: 200,
    });
    expect(await status(id)).toBe('scheduled');
    // Its time is moved to now rather than waited for.
    await waitFor(
      'the broadcast canceled when its time came',
      async () => {
        await makeTimerDue(db, `broadcast-send:${id}`);
        return (await status(id)) === 'canceled';
      },
      30_000,
    );
    expect(await sentTo(id)).toBe(0);
    expect(sink.messages.some((m) => m.to.includes(to))).toBe(false);
  });
});

describe('a large fan-out', () => {
  it('cancels a queued broadcast: the fan-out stops and emails not handed to the MTA are canceled', async () => {
    const { segmentId } = await bigSegment(30_000, 'delivered+', 'postline.test');
    const { id } = dataOf(await resend.broadcasts.create({ ...draft(segmentId), send: true }));
    await waitFor('a first page', async () => (await sentTo(id)) > 0, 30_000);
    dataOf(await resend.broadcasts.cancel(id));
    expect(await status(id)).toBe('canceled');
    const atCancel = await sentTo(id);
    expect(atCancel).toBeLessThan(30_000);
    const { rows } = await sql<{
      status: string;
      n: string;
    }>`select r.status, count(*) as n from broadcast_recipients br
      join recipients r on r.email_id = br.email_id where br.broadcast_id = ${id}::uuid group by r.status`.execute(db);
    const byStatus = Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
    expect(byStatus.pending ?? 0).toBe(0);
    expect(byStatus.canceled ?? 0).toBeGreaterThan(0);
    // The pages' commands still in flight find the broadcast canceled and write nothing more.
    await waitFor('no page after the cancel', async () => (await sentTo(id)) === atCancel, 5_000);
  }, 90_000);
});
