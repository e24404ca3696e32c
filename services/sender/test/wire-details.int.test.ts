// Details of the wire where the reference and the specification are exact, end to end through the real
// gateway and services with the official resend SDK (plain fetch where a status code or a raw field is the
// point): list pages of 20 without `limit`, the 200 of adding a contact to a segment, an attachment's
// `content_id` left out when it has none, the fields of the email events (`broadcast_id`, `template_id`, no
// headers the sender did not set, no `email.sent` for an email sent to no one, `email.suppressed` for a
// broadcast's suppressed contacts), `topic_id` on GET /emails/{id}, and `contact.updated` from a CSV
// import that changes existing contacts. Events are read from the broker as the webhook-dispatcher gets them.
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
  type ObservedMessage,
  type SharedSystem,
} from '@postline/testing';

jest.setTimeout(60_000);

const RCPT = uniqueDomain('rcpt');

let system: SharedSystem;
let events: BrokerObserver;
let resend: Resend;
let apiKey: string;
let domain: string;

const world = useSystem({ rcptDomain: RCPT });

beforeAll(async () => {
  system = world.system;
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [
      { exchange: 'events', pattern: 'email.*' },
      { exchange: 'events', pattern: 'contact.*' },
      { exchange: 'events', pattern: 'internal.domain.state' },
    ],
  });
  const team = await system.admin('team', 'create', '--name', 'Wire details');
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns: world.dns, events, name: `${unique('w')}.example.com` })).name;
}, 90_000);

afterAll(async () => {
  await events?.close();
}, 30_000);

let counter = 0;
function unique(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${counter++}`;
}
const address = (prefix: string) => `${unique(prefix)}@${RCPT}`;

/** A JSON answer: a list page, an item or an error (tests read what they expect of it). */
type Body = Record<string, unknown> & { data: ({ id: string } & Record<string, unknown>)[]; has_more: boolean };

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'user-agent': 'test' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

type SendOptions = Partial<Parameters<Resend['emails']['send']>[0]>;

async function send(options: SendOptions): Promise<string> {
  const mail = { from: `Acme <hello@${domain}>`, to: address('to'), subject: 'Hi', html: '<p>Hi</p>', ...options };
  return dataOf(await resend.emails.send(mail as Parameters<Resend['emails']['send']>[0])).id;
}

function eventOf(type: string, match: (data: Record<string, unknown>) => boolean): Promise<ObservedMessage> {
  return events.waitFor(type, (m) => m.routingKey === type && match(m.envelope.data), { timeoutMs: 20_000 });
}

const typesOf = (emailId: string) =>
  events.messages.filter((m) => m.envelope.data.email_id === emailId).map((m) => m.routingKey);

/** An email sent now and its email.sent seen: what was put in the outbox before it has been published. */
async function barrier(): Promise<void> {
  const id = await send({});
  await eventOf('email.sent', (data) => data.email_id === id);
}

describe('list pages without `limit`', () => {
  it('hold 20 items, with has_more, on the lists the reference calls optional', async () => {
    const segment = dataOf(await resend.segments.create({ name: unique('page') })).id;
    for (let i = 0; i < 21; i++) {
      dataOf(await resend.contacts.create({ email: address(`c${i}-`), segments: [{ id: segment }] }));
    }
    for (const path of ['/contacts', `/segments/${segment}/contacts`]) {
      const page = await call('GET', path);
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(20);
      expect(page.body.has_more).toBe(true);
    }
    const twentieth = (await call('GET', `/segments/${segment}/contacts`)).body.data[19]?.id;
    const rest = await call('GET', `/segments/${segment}/contacts?after=${twentieth}`);
    expect(rest.body.data).toHaveLength(1);
    expect(rest.body.has_more).toBe(false);
  });

  it("hold 20 of a sent email's attachments, and an attachment without a content id has no content_id", async () => {
    const attachments = Array.from({ length: 21 }, (_, i) => ({
      filename: `file-${i}.txt`,
      content: Buffer.from(`file ${i}`).toString('base64'),
      ...(i === 0 ? { contentId: 'logo' } : {}),
    }));
    const id = await send({ attachments });
    const page = await call('GET', `/emails/${id}/attachments`);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(20);
    expect(page.body.has_more).toBe(true);
    const [inline, plain] = page.body.data;
    expect(inline).toMatchObject({ filename: 'file-0.txt', content_disposition: 'inline', content_id: 'logo' });
    expect(plain).toMatchObject({ filename: 'file-1.txt', content_disposition: 'attachment' });
    expect(plain).not.toHaveProperty('content_id');
    const one = await call('GET', `/emails/${id}/attachments/${plain?.id}`);
    expect(one.body).toMatchObject({ object: 'attachment', id: plain?.id });
    expect(one.body).not.toHaveProperty('content_id');
  });
});

describe('POST /contacts/{id}/segments/{segment_id}', () => {
  it('answers 200 with the segment id', async () => {
    const contact = dataOf(await resend.contacts.create({ email: address('member') })).id;
    const segment = dataOf(await resend.segments.create({ name: unique('join') })).id;
    const added = await call('POST', `/contacts/${contact}/segments/${segment}`);
    expect(added).toEqual({ status: 200, body: { id: segment } });
    expect(dataOf(await resend.contacts.segments.list({ contactId: contact })).data.map((s) => s.id)).toEqual([
      segment,
    ]);
  });
});

describe('email events and GET /emails/{id}', () => {
  it('carry the template an email was sent with as template_id', async () => {
    const template = dataOf(
      await resend.templates.create({
        name: 'Welcome',
        from: `Acme <hello@${domain}>`,
        subject: 'Welcome',
        html: '<p>Welcome</p>',
      }),
    ).id;
    dataOf(await resend.templates.publish(template));
    const id = await send({ html: undefined, subject: undefined, template: { id: template } } as SendOptions);
    const sent = await eventOf('email.sent', (data) => data.email_id === id);
    expect(sent.envelope.data.template_id).toBe(template);
    const plain = await send({});
    const plainSent = await eventOf('email.sent', (data) => data.email_id === plain);
    expect(plainSent.envelope.data).not.toHaveProperty('template_id');
    expect(plainSent.envelope.data).not.toHaveProperty('broadcast_id');
  });

  it('answer the topic an email was sent under as topic_id, and send no email.sent when the topic kept every recipient out', async () => {
    const topic = dataOf(await resend.topics.create({ name: unique('Topic '), defaultSubscription: 'opt_out' })).id;
    const optedIn = address('in');
    dataOf(await resend.contacts.create({ email: optedIn, topics: [{ id: topic, subscription: 'opt_in' }] }));
    const sent = await send({ to: optedIn, topicId: topic });
    expect((await call('GET', `/emails/${sent}`)).body).toMatchObject({ id: sent, topic_id: topic });
    await eventOf('email.sent', (data) => data.email_id === sent);
    const untopical = await send({});
    expect((await call('GET', `/emails/${untopical}`)).body).toMatchObject({ topic_id: null });

    const nobody = await send({ to: address('stranger'), topicId: topic });
    await eventOf('email.suppressed', (data) => data.email_id === nobody);
    await barrier();
    expect(typesOf(nobody)).toEqual(['email.suppressed']);
    expect((await call('GET', `/emails/${nobody}`)).body).toMatchObject({ last_event: 'suppressed', topic_id: topic });
  });

  it('of a broadcast carry broadcast_id, never the unsubscribe headers, and email.suppressed for a suppressed contact', async () => {
    const segment = dataOf(await resend.segments.create({ name: unique('news') })).id;
    const reader = address('reader');
    const suppressed = address('supp');
    for (const email of [reader, suppressed]) {
      dataOf(await resend.contacts.create({ email, segments: [{ id: segment }] }));
    }
    dataOf(await resend.suppressions.add({ email: suppressed }));
    const broadcast = dataOf(
      await resend.broadcasts.create({
        segmentId: segment,
        from: `Acme <news@${domain}>`,
        subject: 'News',
        html: '<p>News <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">unsubscribe</a></p>',
        send: true,
      }),
    ).id;
    const sent = await eventOf('email.sent', (data) => (data.to as string[]).includes(reader));
    expect(sent.envelope.data).toMatchObject({ broadcast_id: broadcast, to: [reader] });
    expect(sent.envelope.data).not.toHaveProperty('headers');
    expect(JSON.stringify(sent.envelope.data)).not.toContain('unsubscribe');

    const skipped = await eventOf('email.suppressed', (data) => (data.to as string[]).includes(suppressed));
    expect(skipped.envelope.data).toMatchObject({
      broadcast_id: broadcast,
      to: [suppressed],
      suppressed: { type: 'OnAccountSuppressionList', message: expect.stringContaining('suppression list') },
    });
    expect(skipped.envelope.data).not.toHaveProperty('headers');
    const skippedId = String(skipped.envelope.data.email_id);
    expect((await call('GET', `/emails/${skippedId}`)).body).toMatchObject({
      to: [suppressed],
      last_event: 'suppressed',
    });
    await barrier();
    expect(typesOf(skippedId)).toEqual(['email.suppressed']);
    const listed = dataOf(await resend.broadcasts.recipients(broadcast, { type: 'suppressed' }));
    expect(listed.data.map((r) => r.email)).toEqual([suppressed]);
    const sentList = dataOf(await resend.broadcasts.recipients(broadcast, { type: 'sent' }));
    expect(sentList.data.map((r) => r.email)).toEqual([reader]);
  });
});

describe('a CSV import under upsert', () => {
  it('sends contact.updated for each existing contact it changes, and nothing for one it leaves as it was or creates', async () => {
    const segment = dataOf(await resend.segments.create({ name: unique('imported') })).id;
    const renamed = address('renamed');
    const same = address('same');
    const joined = address('joined');
    const fresh = address('fresh');
    const ids: Record<string, string> = {};
    for (const [email, firstName] of [
      [renamed, 'Old'],
      [same, 'Same'],
      [joined, 'Joined'],
    ] as const) {
      ids[email] = dataOf(await resend.contacts.create({ email, firstName })).id;
    }
    const csv = ['email,first_name', `${renamed},New`, `${same},Same`, `${joined},`, `${fresh},Fresh`, ''].join('\n');
    // The import adds every row to the segment: `same` joins it too, so it has a change of its own; a second
    // import into no segment shows a row that changes nothing sends nothing.
    const first = dataOf(
      await resend.contacts.imports.create({
        file: new Blob([csv], { type: 'text/csv' }),
        onConflict: 'upsert',
        segments: [{ id: segment }],
      }),
    ).id;
    await waitFor(
      'the import to complete',
      async () => dataOf(await resend.contacts.imports.get(first)).status === 'completed',
      20_000,
    );
    const updated = await eventOf('contact.updated', (data) => data.id === ids[renamed]);
    expect(updated.envelope.data).toMatchObject({
      id: ids[renamed],
      email: renamed,
      first_name: 'New',
      segment_ids: [segment],
      audience_id: segment,
    });
    const joinedEvent = await eventOf('contact.updated', (data) => data.id === ids[joined]);
    expect(joinedEvent.envelope.data).toMatchObject({ first_name: 'Joined', segment_ids: [segment] });
    await eventOf('contact.updated', (data) => data.id === ids[same]);

    const before = events.messages.length;
    const second = dataOf(
      await resend.contacts.imports.create({ file: new Blob([csv], { type: 'text/csv' }), onConflict: 'upsert' }),
    ).id;
    await waitFor(
      'the second import to complete',
      async () => dataOf(await resend.contacts.imports.get(second)).status === 'completed',
      20_000,
    );
    // A change made after the import: once its event is seen, the import's would have been.
    const last = dataOf(await resend.contacts.create({ email: address('last') })).id;
    await eventOf('contact.created', (data) => data.id === last);
    const contactEvents = events.messages
      .slice(before)
      .filter((m) => m.routingKey.startsWith('contact.'))
      .map((m) => [m.routingKey, m.envelope.data.email]);
    expect(contactEvents).toEqual([['contact.created', expect.stringContaining('last')]]);
    expect(events.messages.some((m) => m.routingKey === 'contact.created' && m.envelope.data.email === fresh)).toBe(
      false,
    );
  });
});
