// Sending under a topic (topic_id on POST /emails and /emails/batch) end to end: the official resend SDK
// through the real gateway and the real services; the recipients' MX is a local smtp-server sink. A recipient
// whose effective subscription to the topic is opt_out (its explicit choice, else the topic's default; a
// recipient who is not a contact has no choice) is not sent to: it is recorded suppressed and email.suppressed
// says why. Topics, contacts and their choices are set up through the API (/topics, /contacts) with the same
// SDK; the sender's tables are read only for what the API does not show (each recipient's row).
import type { Subscription } from '@postline/contracts';
import { randomUUID as randomUuid } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Kysely } from 'kysely';
import type { Resend } from 'resend';
import {
  dataOf,
  createVerifiedDomain,
  observeBroker,
  startWebhookReceiver,
  verifyDelivery,
  waitFor,
  makeTimerDue,
  nudgeUntil,
  type BrokerObserver,
  type DnsServer,
  type ObservedMessage,
  type SinkMx,
  testResend,
  useSystem,
  type SharedSystem,
  uniqueDomain,
} from '@postline/testing';
import { createDb } from '@postline/platform';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';

jest.setTimeout(60_000);

const RCPT = uniqueDomain('rcpt');

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let db: Kysely<SenderDb>;
let destroyDb: () => Promise<void>;
let resend: Resend;
let domain: string;
let otherResend: Resend;
let otherDomain: string;

const world = useSystem({ rcptDomain: RCPT });

beforeAll(async () => {
  ({ dns, sink, system } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [
      { exchange: 'events', pattern: 'email.*' },
      { exchange: 'events', pattern: 'internal.domain.state' },
    ],
  });
  const created = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA });
  db = created.db;
  destroyDb = () => db.destroy();
  const team = await system.admin('team', 'create', '--name', 'Topics');
  resend = testResend(String(team.api_key), system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns, events, name: `${unique('t')}.example.com` })).name;
  const other = await system.admin('team', 'create', '--name', 'Other topics');
  otherResend = testResend(String(other.api_key), system.apiUrl);
  otherDomain = (await createVerifiedDomain({ resend: otherResend, dns, events, name: `${unique('o')}.example.com` }))
    .name;
}, 90_000);

afterAll(async () => {
  await destroyDb?.();
  await events?.close();
}, 30_000);

let counter = 0;
function unique(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${counter++}`;
}

/** A new address at the sink's domain, never used before. */
const address = (prefix: string) => `${unique(prefix)}@${RCPT}`;

/** A new topic of the client's team (POST /topics). */
async function createTopic(client: Resend, defaultSubscription: Subscription): Promise<{ id: string; name: string }> {
  const name = unique('Topic ');
  const { id } = dataOf(await client.topics.create({ name, defaultSubscription }));
  return { id, name };
}

/**
 * A contact of the client's team (POST /contacts), then its explicit choices (topic id → subscription) through
 * PATCH /contacts/{id}/topics.
 */
async function createContact(client: Resend, email: string, choices: Record<string, Subscription> = {}): Promise<void> {
  const { id } = dataOf(await client.contacts.create({ email }));
  const topics = Object.entries(choices).map(([topicId, subscription]) => ({ id: topicId, subscription }));
  if (topics.length > 0) dataOf(await client.contacts.topics.update({ id, topics }));
}

type SendOptions = Partial<Parameters<Resend['emails']['send']>[0]>;

function mail(options: SendOptions, from = domain): Parameters<Resend['emails']['send']>[0] {
  return {
    from: `Acme <hello@${from}>`,
    to: address('ok'),
    subject: 'News',
    html: '<p>News</p>',
    ...options,
  } as Parameters<Resend['emails']['send']>[0];
}

async function sendOk(options: SendOptions, requestOptions?: { idempotencyKey?: string }): Promise<string> {
  const { data, error } = await resend.emails.send(mail(options), requestOptions);
  if (error || !data) throw new Error(JSON.stringify(error));
  return data.id;
}

function eventFor(type: string, emailId: string, extra: (m: ObservedMessage) => boolean = () => true) {
  return events.waitFor(
    `${type} ${emailId}`,
    (m) => m.routingKey === type && m.envelope.data.email_id === emailId && extra(m),
    {
      timeoutMs: 20_000,
    },
  );
}

const eventsOf = (emailId: string) =>
  events.messages.filter((m) => m.envelope.data.email_id === emailId).map((m) => m.routingKey);

/** Every address the email's email.delivered events name, once they name all of `expected`. */
async function deliveredTo(emailId: string, expected: readonly string[]): Promise<string[]> {
  const names = () =>
    events.messages
      .filter((m) => m.routingKey === 'email.delivered' && m.envelope.data.email_id === emailId)
      .flatMap((m) => m.envelope.data.to as string[]);
  await waitFor(`delivered to ${expected.join(', ')}`, () => expected.every((a) => names().includes(a)), 20_000);
  return names();
}

/** Whether the sink received a message for `recipient` (compared without case). */
const reachedSink = (recipient: string) =>
  sink.messages.some((m) => m.to.some((to) => to.toLowerCase() === recipient.toLowerCase()));

async function recipientsOf(emailId: string) {
  return db
    .selectFrom('recipients')
    .select(['address', 'status', 'attempts', 'last_response'])
    .where('email_id', '=', emailId)
    .orderBy('position')
    .execute();
}

/** How many emails the client's team has (GET /emails, every page). */
async function emailCount(client: Resend): Promise<number> {
  let count = 0;
  let after: string | undefined;
  for (;;) {
    const page = dataOf(await client.emails.list(after === undefined ? { limit: 100 } : { limit: 100, after }));
    count += page.data.length;
    if (!page.has_more) return count;
    after = page.data.at(-1)?.id;
  }
}

/** Sends an email without a topic and waits for its delivery: what was queued before it has been handled. */
async function barrier(): Promise<void> {
  const to = address('barrier');
  const id = await sendOk({ to });
  await deliveredTo(id, [to]);
}

describe('POST /emails with topic_id', () => {
  it('under an opt_in topic, skips a contact who opted out (to) and sends to a contact without a choice (cc) and a non-contact (bcc)', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { data: hook, error } = await resend.webhooks.create({
        endpoint: `${receiver.url}/hooks`,
        events: ['email.suppressed'],
      });
      if (error || !hook) throw new Error(JSON.stringify(error));
      const topic = await createTopic(resend, 'opt_in');
      const optedOut = address('out');
      const noChoice = address('nochoice');
      const stranger = address('stranger');
      // Contacts are one per email per team without case: the send's case does not matter.
      await createContact(resend, `${optedOut.split('@')[0]!.toUpperCase()}@${RCPT}`, { [topic.id]: 'opt_out' });
      await createContact(resend, noChoice);

      const id = await sendOk({ to: optedOut, cc: noChoice, bcc: stranger, topicId: topic.id });
      const suppressed = await eventFor('email.suppressed', id);
      expect(suppressed.envelope.data).toMatchObject({
        email_id: id,
        to: [optedOut],
        suppressed: {
          type: 'Suppressed',
          message: expect.stringContaining(`opted out of the topic "${topic.name}" (${topic.id})`),
        },
      });
      expect(suppressed.envelope.data.suppressed).not.toHaveProperty('reason');
      expect((await deliveredTo(id, [noChoice, stranger])).sort()).toEqual([noChoice, stranger].sort());
      expect(reachedSink(noChoice) && reachedSink(stranger)).toBe(true);
      expect(reachedSink(optedOut)).toBe(false);
      expect(eventsOf(id)).not.toContain('email.failed');

      expect(await recipientsOf(id)).toEqual([
        { address: optedOut, status: 'suppressed', attempts: 0, last_response: expect.stringContaining(topic.id) },
        { address: noChoice, status: 'delivered', attempts: 1, last_response: expect.any(String) },
        { address: stranger, status: 'delivered', attempts: 1, last_response: expect.any(String) },
      ]);

      await receiver.waitFor('email.suppressed webhook', (ds) => ds.some((d) => d.json.data.email_id === id), 20_000);
      const delivery = receiver.deliveries.find((d) => d.json.data.email_id === id);
      expect(verifyDelivery(delivery!, hook.signing_secret)).toBe(true);
      expect(delivery?.json).toMatchObject({
        type: 'email.suppressed',
        data: {
          email_id: id,
          to: [optedOut],
          subject: 'News',
          suppressed: { type: 'Suppressed', message: expect.stringContaining(topic.name) },
        },
      });

      // The choice is about the topic: the same contact gets an email sent without one.
      const plain = await sendOk({ to: optedOut });
      await deliveredTo(plain, [optedOut]);
    } finally {
      await receiver.close();
    }
  });

  it('under an opt_out topic, sends only to a contact who opted in; a contact without a choice and a non-contact are suppressed by the default', async () => {
    const topic = await createTopic(resend, 'opt_out');
    const optedIn = address('in');
    const noChoice = address('nochoice');
    const stranger = address('stranger');
    await createContact(resend, optedIn, { [topic.id]: 'opt_in' });
    await createContact(resend, noChoice);

    const id = await sendOk({ to: [optedIn, noChoice], bcc: stranger, topicId: topic.id });
    const suppressed = await eventFor('email.suppressed', id);
    expect(suppressed.envelope.data).toMatchObject({
      to: [noChoice, stranger],
      suppressed: {
        type: 'Suppressed',
        message: expect.stringContaining(
          `has not opted in to the topic "${topic.name}" (${topic.id}), which is opt-out by default`,
        ),
      },
    });
    expect(await deliveredTo(id, [optedIn])).toEqual([optedIn]);
    expect(reachedSink(noChoice) || reachedSink(stranger)).toBe(false);
    expect((await recipientsOf(id)).map((r) => r.status)).toEqual(['delivered', 'suppressed', 'suppressed']);
  });

  it('an email whose every recipient is opted out is not delivered at all, and its last event is suppressed', async () => {
    const topic = await createTopic(resend, 'opt_out');
    const stranger = address('stranger');
    const optedOut = address('out');
    await createContact(resend, optedOut, { [topic.id]: 'opt_out' });
    const id = await sendOk({ to: stranger, cc: optedOut, topicId: topic.id });
    await eventFor('email.suppressed', id, (m) => (m.envelope.data.to as string[]).includes(optedOut));
    await eventFor('email.suppressed', id, (m) => (m.envelope.data.to as string[]).includes(stranger));
    expect((await resend.emails.get(id)).data).toMatchObject({ id, last_event: 'suppressed' });

    await barrier();
    // Sent to no one: no email.sent.
    expect(eventsOf(id).sort()).toEqual(['email.suppressed', 'email.suppressed']);
    expect(reachedSink(stranger) || reachedSink(optedOut)).toBe(false);
    expect((await recipientsOf(id)).map((r) => [r.status, r.attempts])).toEqual([
      ['suppressed', 0],
      ['suppressed', 0],
    ]);
  });

  it('finds the contact whatever the case of the address and in either form of an IDN domain', async () => {
    const topic = await createTopic(resend, 'opt_in');
    const local = unique('Idn.');
    await createContact(resend, `${local}@bücher.test`, { [topic.id]: 'opt_out' });
    const id = await sendOk({ to: `${local.toUpperCase()}@xn--bcher-kva.test`, topicId: topic.id });
    const suppressed = await eventFor('email.suppressed', id);
    expect(suppressed.envelope.data).toMatchObject({
      to: [`${local.toUpperCase()}@xn--bcher-kva.test`],
      suppressed: { type: 'Suppressed' },
    });
  });

  it('applies the topic on the idempotent path too, and a replay sends nothing more', async () => {
    const topic = await createTopic(resend, 'opt_out');
    const stranger = address('stranger');
    const key = unique('key-');
    const id = await sendOk({ to: stranger, topicId: topic.id }, { idempotencyKey: key });
    await eventFor('email.suppressed', id);
    expect(await sendOk({ to: stranger, topicId: topic.id }, { idempotencyKey: key })).toBe(id);
    expect((await recipientsOf(id)).map((r) => r.status)).toEqual(['suppressed']);
  });

  it("answers 404 not_found for an unknown topic or another team's, and writes nothing", async () => {
    const theirs = await createTopic(otherResend, 'opt_in');
    const before = await emailCount(resend);
    for (const topicId of [randomUuid(), theirs.id]) {
      const single = await resend.emails.send(mail({ topicId }));
      expect(single.error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Topic not found' });
      const keyed = await resend.emails.send(mail({ topicId }), { idempotencyKey: unique('key-') });
      expect(keyed.error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Topic not found' });
    }
    const malformed = await resend.emails.send(mail({ topicId: 'news' }));
    expect(malformed.error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
    expect(await emailCount(resend)).toBe(before);

    // The topic is its own team's: that team sends under it.
    const { data, error } = await otherResend.emails.send(
      mail({ to: address('theirs'), topicId: theirs.id }, otherDomain),
    );
    expect(error).toBeNull();
    await eventFor('email.sent', String(data?.id));
  });
});

describe('POST /emails/batch with topic_id', () => {
  it('strict: an unknown topic refuses the whole batch naming its index; otherwise each email follows its own topic', async () => {
    const optIn = await createTopic(resend, 'opt_in');
    const optOut = await createTopic(resend, 'opt_out');
    const before = await emailCount(resend);
    const refused = await resend.batch.send([mail({ topicId: optIn.id }), mail({ topicId: randomUuid() })]);
    expect(refused.error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'emails[1]: Topic not found' });
    expect(await emailCount(resend)).toBe(before);

    const first = address('first');
    const second = address('second');
    const ok = await resend.batch.send([
      mail({ to: first, topicId: optIn.id }),
      mail({ to: second, topicId: optOut.id }),
    ]);
    const [a, b] = (ok.data?.data ?? []).map((entry) => entry.id);
    await deliveredTo(String(a), [first]);
    const suppressed = await eventFor('email.suppressed', String(b));
    expect(suppressed.envelope.data).toMatchObject({ to: [second], suppressed: { type: 'Suppressed' } });
    expect(reachedSink(second)).toBe(false);
  });

  it("permissive: lists an unknown topic and another team's among the errors and accepts the others", async () => {
    const optOut = await createTopic(resend, 'opt_out');
    const theirs = await createTopic(otherResend, 'opt_in');
    const stranger = address('stranger');
    const plain = address('plain');
    const res = await resend.batch.send(
      [
        mail({ to: stranger, topicId: optOut.id }),
        mail({ topicId: randomUuid() }),
        mail({ topicId: theirs.id }),
        mail({ to: plain }),
      ],
      { batchValidation: 'permissive' },
    );
    expect(res.data?.data).toHaveLength(2);
    expect((res.data as unknown as { errors: unknown[] }).errors).toEqual([
      { index: 1, message: 'Topic not found' },
      { index: 2, message: 'Topic not found' },
    ]);
    const [suppressedId, sentId] = (res.data?.data ?? []).map((entry) => String(entry.id));
    await eventFor('email.suppressed', String(suppressedId));
    await deliveredTo(String(sentId), [plain]);
    expect(reachedSink(stranger)).toBe(false);
  });
});

describe('a scheduled email with topic_id', () => {
  it('records the opted-out recipients at once and, at its time, delivers to the others only', async () => {
    const topic = await createTopic(resend, 'opt_in');
    const optedOut = address('out');
    const other = address('other');
    await createContact(resend, optedOut, { [topic.id]: 'opt_out' });
    const id = await sendOk({
      to: [optedOut, other],
      topicId: topic.id,
      scheduledAt: 'in 1 hour',
    });
    await eventFor('email.scheduled', id);
    await eventFor('email.suppressed', id);
    expect((await resend.emails.get(id)).data).toMatchObject({ last_event: 'scheduled' });
    // Its time is moved to now rather than waited for.
    expect(
      await nudgeUntil('its time', deliveredTo(id, [other]), () => makeTimerDue(db, `email-send:${id}`), 20_000),
    ).toEqual([other]);
    expect(reachedSink(optedOut)).toBe(false);
    expect((await recipientsOf(id)).map((r) => r.status)).toEqual(['suppressed', 'delivered']);
  });
});
