// The audience end to end: contacts, contact properties, segments (and the legacy /audiences), topics and
// subscriptions through the real gateway and sender, with the official resend SDK and plain HTTP for what
// the SDK lacks; contact.* webhooks received and verified by a local endpoint.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import {
  dataOf,
  startWebhookReceiver,
  verifyDelivery,
  type ReceivedDelivery,
  type WebhookReceiver,
  testResend,
  useSystem,
  type SharedSystem,
} from '@postline/testing';

import type { PaginationQuery } from '@postline/contracts';
import { createDb } from '@postline/platform';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import { listContacts, listSegmentContacts, type ContactFilter } from '../src/audience/db/contacts.ts';
import type { SenderDb } from '../src/db/schema.ts';

jest.setTimeout(60_000);

let system: SharedSystem;
let receiver: WebhookReceiver;
let signingSecret: string;
let resend: Resend;
let other: Resend;
let apiKey: string;
let otherKey: string;

const world = useSystem();

beforeAll(async () => {
  ({ system } = world);
  apiKey = String((await system.admin('team', 'create', '--name', 'Audience')).api_key);
  otherKey = String((await system.admin('team', 'create', '--name', 'Other')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  other = testResend(otherKey, system.apiUrl);
  receiver = await startWebhookReceiver();
  const hook = dataOf(
    await resend.webhooks.create({
      endpoint: receiver.url,
      events: ['contact.created', 'contact.updated', 'contact.deleted'],
    }),
  );
  signingSecret = hook.signing_secret;
}, 90_000);

afterAll(async () => {
  await receiver?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;
const address = (prefix: string) => `${unique(prefix)}@example.com`;
const MISSING_ID = '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f';
const POSTGRES_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/;

async function call(
  method: string,
  path: string,
  body?: unknown,
  key = apiKey,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': 'test' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function newSegment(name = unique('segment')): Promise<string> {
  return dataOf(await resend.segments.create({ name })).id;
}

async function newTopic(defaultSubscription: 'opt_in' | 'opt_out', name = unique('topic')): Promise<string> {
  return dataOf(await resend.topics.create({ name, defaultSubscription })).id;
}

/** The contact.* deliveries about one contact, in arrival order, each verified. */
async function contactEvents(contactId: string, count: number): Promise<ReceivedDelivery[]> {
  const about = () => receiver.deliveries.filter((d) => d.json.data.id === contactId);
  await receiver.waitFor(`${count} contact events of ${contactId}`, () => about().length >= count);
  for (const delivery of about()) expect(verifyDelivery(delivery, signingSecret)).toBe(true);
  return about();
}

describe('contact properties', () => {
  it('creates, lists, reads, changes the fallback of and deletes a property', async () => {
    const key = unique('plan_');
    const created = dataOf(await resend.contactProperties.create({ key, type: 'string', fallbackValue: 'free' }));
    expect(created).toEqual({ object: 'contact_property', id: expect.any(String) });

    const got = await call('GET', `/contact-properties/${created.id}`);
    expect(got.body).toEqual({
      object: 'contact_property',
      id: created.id,
      key,
      type: 'string',
      fallback_value: 'free',
      created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
    });
    expect(dataOf(await resend.contactProperties.list()).data.map((p) => p.key)).toContain(key);

    expect(dataOf(await resend.contactProperties.update({ id: created.id, fallbackValue: 'basic' }))).toEqual({
      object: 'contact_property',
      id: created.id,
    });
    expect(dataOf(await resend.contactProperties.get(created.id))).toMatchObject({
      key,
      type: 'string',
      fallbackValue: 'basic',
    });
    // The record sent back whole is tolerated; a different type is not.
    expect(
      (await call('PATCH', `/contact-properties/${created.id}`, { key, type: 'string', fallback_value: null })).status,
    ).toBe(200);
    expect(await call('PATCH', `/contact-properties/${created.id}`, { type: 'number' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('PATCH', `/contact-properties/${created.id}`, { fallback_value: 3 })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });

    expect(dataOf(await resend.contactProperties.remove(created.id))).toEqual({
      object: 'contact_property',
      id: created.id,
      deleted: true,
    });
    expect((await resend.contactProperties.get(created.id)).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
  });

  it('refuses a bad key, a taken key and a fallback of the wrong type', async () => {
    const key = unique('seats_');
    expect((await resend.contactProperties.create({ key: 'has-dash', type: 'string' })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
    expect((await resend.contactProperties.create({ key: 'x'.repeat(51), type: 'string' })).error).toMatchObject({
      statusCode: 422,
    });
    expect(await call('POST', '/contact-properties', { key, type: 'number', fallback_value: '1' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('POST', '/contact-properties', { key, type: 'boolean' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('POST', '/contact-properties', { type: 'number' })).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'Missing `key` field.' },
    });
    expect(await call('POST', '/contact-properties', { key })).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'Missing `type` field.' },
    });
    dataOf(await resend.contactProperties.create({ key, type: 'number', fallbackValue: 1 }));
    expect((await resend.contactProperties.create({ key, type: 'number' })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
  });
});

describe('contacts', () => {
  let plan: string;
  let seats: string;

  beforeAll(async () => {
    plan = unique('plan_');
    seats = unique('seats_');
    dataOf(await resend.contactProperties.create({ key: plan, type: 'string' }));
    dataOf(await resend.contactProperties.create({ key: seats, type: 'number' }));
  });

  it('creates a contact with properties, segments and topics in one call and reads it by id and by email', async () => {
    const segment = await newSegment();
    const topic = await newTopic('opt_in');
    const email = `A+${unique('b')}@Example.com`;
    const created = dataOf(
      await resend.contacts.create({
        email,
        firstName: 'Ann',
        properties: { [plan]: 'pro', [seats]: 3 },
        segments: [{ id: segment }],
        topics: [{ id: topic, subscription: 'opt_out' }],
      }),
    );
    expect(created).toEqual({ object: 'contact', id: expect.any(String) });

    const expected = {
      object: 'contact',
      id: created.id,
      email: email.replace('Example.com', 'example.com'),
      first_name: 'Ann',
      last_name: null,
      created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      unsubscribed: false,
      properties: { [plan]: { value: 'pro', type: 'string' }, [seats]: { value: 3, type: 'number' } },
    };
    expect(dataOf(await resend.contacts.get(created.id))).toEqual(expected);
    // By email, sent raw in the path (`+` and `@` unencoded), in any case.
    expect(dataOf(await resend.contacts.get({ email: email.toLowerCase() }))).toEqual(expected);
    expect((await call('GET', `/contacts/${encodeURIComponent(email.toUpperCase())}`)).body).toEqual(expected);

    expect(dataOf(await resend.contacts.segments.list({ contactId: created.id })).data).toEqual([
      { id: segment, name: expect.any(String), created_at: expect.stringMatching(POSTGRES_TIMESTAMP) },
    ]);
    expect(dataOf(await resend.contacts.topics.list({ id: created.id })).data).toContainEqual({
      id: topic,
      name: expect.any(String),
      description: null,
      subscription: 'opt_out',
    });
  });

  it('lists contacts newest first, a page at a time, and those of a segment', async () => {
    const segment = await newSegment();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(dataOf(await resend.contacts.create({ email: address('list'), segments: [{ id: segment }] })).id);
    const outside = dataOf(await resend.contacts.create({ email: address('outside') })).id;

    const all = dataOf(await resend.contacts.list());
    expect(all.has_more).toBe(false);
    expect(all.data.map((c) => c.id).slice(0, 4)).toEqual([outside, ...ids.toReversed()]);
    expect(all.data[0]).toEqual({
      id: outside,
      email: expect.any(String),
      first_name: null,
      last_name: null,
      created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      unsubscribed: false,
    });

    // The SDK lists a segment's contacts at /segments/{id}/contacts; ?segment_id= is the same list.
    const first = dataOf(await resend.contacts.list({ segmentId: segment, limit: 2 }));
    expect(first).toMatchObject({ object: 'list', has_more: true });
    expect(first.data.map((c) => c.id)).toEqual([ids[2], ids[1]]);
    const rest = dataOf(await resend.contacts.list({ segmentId: segment, limit: 2, after: ids[1] }));
    expect(rest.data.map((c) => c.id)).toEqual([ids[0]]);
    expect(rest.has_more).toBe(false);
    expect((await call('GET', `/contacts?segment_id=${segment}`)).body.data).toEqual(
      dataOf(await resend.contacts.list({ segmentId: segment })).data,
    );
    expect((await call('GET', '/contacts?limit=0')).body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect((await call('GET', `/contacts?segment_id=${MISSING_ID}`)).status).toBe(404);
  });

  it('searches contacts by a part of the email or name, and filters by unsubscribed, in a segment too', async () => {
    const tag = unique('find');
    const segment = await newSegment();
    const grace = dataOf(
      await resend.contacts.create({
        email: `grace.${tag}@example.com`,
        firstName: 'Grace',
        lastName: 'Hopper',
        segments: [{ id: segment }],
      }),
    ).id;
    const alan = dataOf(
      await resend.contacts.create({ email: `a.${tag}@example.com`, firstName: 'Alan', lastName: 'Turing' }),
    ).id;
    const gone = dataOf(
      await resend.contacts.create({
        email: `gone.${tag}@example.com`,
        unsubscribed: true,
        segments: [{ id: segment }],
      }),
    ).id;
    const ids = async (query: string) =>
      ((await call('GET', `/contacts?${query}`)).body.data as { id: string }[]).map((c) => c.id);
    expect(await ids(`q=${tag}`)).toEqual([gone, alan, grace]);
    expect(await ids(`q=${encodeURIComponent(`HOPPER`)}&limit=100`)).toContain(grace);
    expect(await ids(`q=${encodeURIComponent(`grace.${tag.toUpperCase()}`)}`)).toEqual([grace]);
    expect(await ids(`q=${tag}&unsubscribed=true`)).toEqual([gone]);
    expect(await ids(`q=${tag}&unsubscribed=false`)).toEqual([alan, grace]);
    expect(await ids(`segment_id=${segment}&q=${tag}&unsubscribed=false`)).toEqual([grace]);
    expect(await ids(`segment_id=${segment}&q=gone.${tag}`)).toEqual([gone]);
    // LIKE's wildcards are matched as text.
    expect(await ids(`q=${encodeURIComponent(`%${tag}`)}`)).toEqual([]);
    expect((await call('GET', '/contacts?unsubscribed=maybe')).body).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
    // Another team's search finds none of them.
    expect(((await call('GET', `/contacts?q=${tag}`, undefined, otherKey)).body.data as unknown[]).length).toBe(0);
  });

  it('filters contacts by their subscription to a topic, its default when they made no choice', async () => {
    const tag = unique('topical');
    const segment = await newSegment();
    const news = await newTopic('opt_in');
    const offers = await newTopic('opt_out');
    const make = async (name: string, topics: { id: string; subscription: 'opt_in' | 'opt_out' }[]) =>
      dataOf(await resend.contacts.create({ email: `${name}.${tag}@example.com`, topics, segments: [{ id: segment }] }))
        .id;
    const quiet = await make('quiet', []);
    const leaver = await make('leaver', [{ id: news, subscription: 'opt_out' }]);
    const keen = await make('keen', [{ id: offers, subscription: 'opt_in' }]);
    const ids = async (query: string) =>
      ((await call('GET', `/contacts?limit=100&${query}`)).body.data as { id: string }[])
        .map((c) => c.id)
        .filter((id) => [quiet, leaver, keen].includes(id));
    // News is opt-in by default: everyone but the one who left it.
    expect(await ids(`topic_id=${news}`)).toEqual([keen, quiet]);
    expect(await ids(`topic_id=${news}&topic_subscription=opt_out`)).toEqual([leaver]);
    // Offers is opt-out by default: only the one who chose it (read from the choices, not the team).
    expect(await ids(`topic_id=${offers}&topic_subscription=opt_in`)).toEqual([keen]);
    expect(await ids(`topic_id=${offers}&topic_subscription=opt_out`)).toEqual([leaver, quiet]);
    // With a search and in a segment.
    expect(await ids(`topic_id=${news}&q=${tag}`)).toEqual([keen, quiet]);
    expect(await ids(`topic_id=${offers}&topic_subscription=opt_in&q=${tag}`)).toEqual([keen]);
    expect(await ids(`segment_id=${segment}&topic_id=${news}&topic_subscription=opt_out`)).toEqual([leaver]);
    // Bad or foreign topics.
    expect((await call('GET', `/contacts?topic_id=${MISSING_ID}`)).status).toBe(404);
    expect((await call('GET', `/contacts?topic_id=${news}`, undefined, otherKey)).status).toBe(404);
    expect((await call('GET', `/contacts?topic_id=${news}&topic_subscription=maybe`)).body).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
    expect((await call('GET', '/contacts?topic_subscription=opt_in')).body).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
  });

  it('counts the contacts of each segment, topic and property when asked, and adds nothing otherwise', async () => {
    const team = String((await system.admin('team', 'create', '--name', 'Counted')).api_key);
    const teamResend = testResend(team, system.apiUrl);
    const segment = dataOf(await teamResend.segments.create({ name: 'Counted' })).id;
    const empty = dataOf(await teamResend.segments.create({ name: 'Empty' })).id;
    const news = dataOf(await teamResend.topics.create({ name: 'News', defaultSubscription: 'opt_in' })).id;
    const offers = dataOf(await teamResend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' })).id;
    const plan = (await call('POST', '/contact-properties', { key: 'plan', type: 'string' }, team)).body.id as string;
    const seats = (await call('POST', '/contact-properties', { key: 'seats', type: 'number' }, team)).body.id as string;
    await call(
      'POST',
      '/contacts',
      { email: 'a@example.com', properties: { plan: 'pro' }, segments: [{ id: segment }] },
      team,
    );
    await call(
      'POST',
      '/contacts',
      {
        email: 'b@example.com',
        properties: { plan: 'free', seats: 3 },
        segments: [{ id: segment }],
        topics: [{ id: news, subscription: 'opt_out' }],
      },
      team,
    );
    await call('POST', '/contacts', { email: 'c@example.com', topics: [{ id: offers, subscription: 'opt_in' }] }, team);
    const list = async (path: string) =>
      (await call('GET', path, undefined, team)).body.data as Record<string, unknown>[];
    const byId = (rows: Record<string, unknown>[], id: string) => rows.find((row) => row.id === id);

    const segments = await list('/segments?counts=true');
    expect(byId(segments, segment)).toMatchObject({ contacts_count: 2 });
    expect(byId(segments, empty)).toMatchObject({ contacts_count: 0 });
    const topics = await list('/topics?counts=true');
    expect(byId(topics, news)).toMatchObject({ counts: { opt_in: 2, opt_out: 1 } });
    expect(byId(topics, offers)).toMatchObject({ counts: { opt_in: 1, opt_out: 2 } });
    const properties = await list('/contact-properties?counts=true');
    expect(byId(properties, plan)).toMatchObject({ contacts_count: 2 });
    expect(byId(properties, seats)).toMatchObject({ contacts_count: 1 });
    // Without the flag, the reference's shapes.
    expect(byId(await list('/segments'), segment)).not.toHaveProperty('contacts_count');
    expect(byId(await list('/topics'), news)).not.toHaveProperty('counts');
    expect(byId(await list('/contact-properties'), plan)).not.toHaveProperty('contacts_count');
    expect((await call('GET', '/segments?counts=yes', undefined, team)).body).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
  });

  it('searches past a window of the newest contacts through the index, paging both ways and in a segment', async () => {
    // The search reads the newest `scan` contacts in order, then the index's matches beyond them: a window of
    // 4 here, with 12 contacts, the matches old and new around it.
    const team = await system.admin('team', 'create', '--name', 'Search windows');
    const teamId = String(team.team_id);
    const client = testResend(String(team.api_key), system.apiUrl);
    const segment = dataOf(await client.segments.create({ name: 'Half' })).id;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const needle = i % 3 === 0; // 0, 3, 6, 9
      const { id } = dataOf(
        await client.contacts.create({
          email: `${needle ? 'needle' : 'hay'}${i}.${Date.now()}@example.com`,
          unsubscribed: i === 6,
          ...(i % 2 === 0 ? { segments: [{ id: segment }] } : {}),
        }),
      );
      ids.push(id);
    }
    const [n0, n3, n6, n9] = [ids[0]!, ids[3]!, ids[6]!, ids[9]!];
    const { db } = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA, max: 1 });
    try {
      const search = (page: PaginationQuery, filter: ContactFilter = {}, segmentId?: string) =>
        (segmentId
          ? listSegmentContacts(db, teamId, segmentId, page, { q: 'NEEDLE', ...filter }, { scan: 4 })
          : listContacts(db, teamId, page, { q: 'NEEDLE', ...filter }, { scan: 4 })
        ).then((p) => ({ ids: p.data.map((c) => c.id), has_more: p.has_more }));
      // Newest first: 9 from the window, 6, 3 and 0 from the index.
      expect(await search({})).toEqual({ ids: [n9, n6, n3, n0], has_more: false });
      expect(await search({ limit: 2 })).toEqual({ ids: [n9, n6], has_more: true });
      expect(await search({ limit: 2, after: n6 })).toEqual({ ids: [n3, n0], has_more: false });
      expect(await search({ limit: 2, before: n3 })).toEqual({ ids: [n9, n6], has_more: false });
      expect(await search({ limit: 1, before: n0 })).toEqual({ ids: [n3], has_more: true });
      expect(await search({}, { unsubscribed: false })).toEqual({ ids: [n9, n3, n0], has_more: false });
      // In the segment (the even ones): 6 and 0.
      expect(await search({}, {}, segment)).toEqual({ ids: [n6, n0], has_more: false });
      expect(await search({ limit: 1 }, {}, segment)).toEqual({ ids: [n6], has_more: true });
      expect(await search({ limit: 1, after: n6 }, {}, segment)).toEqual({ ids: [n0], has_more: false });
    } finally {
      await db.destroy();
    }
  });

  it('updates fields and properties by email; null clears a value', async () => {
    const email = address('update');
    const { id } = dataOf(
      await resend.contacts.create({ email, firstName: 'Old', properties: { [plan]: 'free', [seats]: 1 } }),
    );
    expect(
      dataOf(
        await resend.contacts.update({
          email,
          firstName: 'New',
          lastName: 'Name',
          unsubscribed: true,
          properties: { [seats]: null, [plan]: 'pro' },
        }),
      ),
    ).toEqual({
      object: 'contact',
      id,
    });
    expect(dataOf(await resend.contacts.get(id))).toMatchObject({
      first_name: 'New',
      last_name: 'Name',
      unsubscribed: true,
      properties: { [plan]: { value: 'pro', type: 'string' } },
    });
    expect(dataOf(await resend.contacts.get(id)).properties).not.toHaveProperty(seats);
    // The SDK cannot change the email; the API can.
    const renamed = address('renamed');
    expect((await call('PATCH', `/contacts/${id}`, { email: renamed })).status).toBe(200);
    expect(dataOf(await resend.contacts.get({ email: renamed })).id).toBe(id);
  });

  it('refuses an unknown property key and a value of the wrong type with 422 naming the key, writing nothing', async () => {
    const email = address('typed');
    const wrongType = await resend.contacts.create({ email, properties: { [seats]: 'three' } });
    expect(wrongType.error).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: `The contact property \`${seats}\` must be a number.`,
    });
    const unknownKey = await resend.contacts.create({ email, properties: { no_such_key: 'x' } });
    expect(unknownKey.error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('`no_such_key`'),
    });
    expect((await resend.contacts.get({ email })).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
      message: 'Contact not found',
    });

    const { id } = dataOf(await resend.contacts.create({ email, firstName: 'Kept', properties: { [seats]: 2 } }));
    const bad = await resend.contacts.update({ id, firstName: 'Lost', properties: { [plan]: 'pro', [seats]: '3' } });
    expect(bad.error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining(`\`${seats}\``),
    });
    expect(dataOf(await resend.contacts.get(id))).toMatchObject({
      first_name: 'Kept',
      properties: { [seats]: { value: 2, type: 'number' } },
    });
  });

  it('refuses a missing or bad email, a taken email, and unknown segments or topics naming them, writing nothing', async () => {
    expect(await call('POST', '/contacts', {})).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'Missing `email` field.' },
    });
    expect(await call('POST', '/contacts', { email: 'not an address' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    const email = address('taken');
    dataOf(await resend.contacts.create({ email }));
    expect((await resend.contacts.create({ email: email.toUpperCase() })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('already exists'),
    });
    const second = dataOf(await resend.contacts.create({ email: address('second') }));
    expect(await call('PATCH', `/contacts/${second.id}`, { email })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });

    const fresh = address('fresh');
    const segment = await newSegment();
    const noSegment = await resend.contacts.create({ email: fresh, segments: [{ id: segment }, { id: MISSING_ID }] });
    expect(noSegment.error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
      message: expect.stringContaining(MISSING_ID),
    });
    const noTopic = await call('POST', '/contacts', {
      email: fresh,
      segments: [segment],
      topics: [{ id: 'nope', subscription: 'opt_in' }],
    });
    expect(noTopic).toMatchObject({
      status: 404,
      body: { name: 'not_found', message: expect.stringContaining('nope') },
    });
    expect((await resend.contacts.get({ email: fresh })).error).toMatchObject({ statusCode: 404 });
    expect(dataOf(await resend.contacts.list({ segmentId: segment })).data).toEqual([]);
  });

  it('deletes a contact by id or by email, answering with the key as given', async () => {
    const email = `${unique('del+x')}@example.com`;
    dataOf(await resend.contacts.create({ email }));
    expect(dataOf(await resend.contacts.remove({ email }))).toEqual({
      object: 'contact',
      contact: email,
      deleted: true,
    });
    expect((await resend.contacts.get({ email })).error).toMatchObject({ statusCode: 404 });
    expect((await resend.contacts.remove({ email })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    const { id } = dataOf(await resend.contacts.create({ email: address('del') }));
    expect(dataOf(await resend.contacts.remove(id))).toEqual({ object: 'contact', contact: id, deleted: true });
  });

  it('answers a path that is not valid percent-encoding with a 4xx error body, never a 500', async () => {
    for (const path of ['/contacts/%E0%A4%A', '/contacts/a%zz@example.com/topics']) {
      const answer = await call('GET', path);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(answer.body).toMatchObject({
        statusCode: answer.status,
        name: expect.any(String),
        message: expect.any(String),
      });
    }
  });

  it('keeps a deleted property out of contacts, and a property made again with that key starts empty', async () => {
    const key = unique('gone_');
    const property = dataOf(await resend.contactProperties.create({ key, type: 'string' })).id;
    const { id } = dataOf(
      await resend.contacts.create({ email: address('prop'), properties: { [key]: 'v', [seats]: 5 } }),
    );
    dataOf(await resend.contactProperties.remove(property));
    expect(dataOf(await resend.contacts.get(id)).properties).toEqual({ [seats]: { value: 5, type: 'number' } });
    dataOf(await resend.contactProperties.create({ key, type: 'number' }));
    expect(dataOf(await resend.contacts.get(id)).properties).toEqual({ [seats]: { value: 5, type: 'number' } });
  });
});

describe('segments', () => {
  it('creates, lists, reads, renames and deletes a segment; an unknown one is "Audience not found"', async () => {
    const name = unique('Customers ');
    const created = dataOf(await resend.segments.create({ name }));
    expect(created).toEqual({ object: 'segment', id: expect.any(String), name });
    expect(dataOf(await resend.segments.get(created.id))).toEqual({
      object: 'segment',
      id: created.id,
      name,
      created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
    });
    const list = dataOf(await resend.segments.list());
    expect(list.data[0]).toEqual({ id: created.id, name, created_at: expect.any(String) });
    expect(list.has_more).toBe(false);
    expect(dataOf(await resend.segments.list({ limit: 1 })).has_more).toBe(true);

    expect(await call('PATCH', `/segments/${created.id}`, { name: 'Renamed' })).toEqual({
      status: 200,
      body: { object: 'segment', id: created.id },
    });
    expect(dataOf(await resend.segments.get(created.id)).name).toBe('Renamed');
    expect(await call('POST', '/segments', {})).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'Missing `name` field.' },
    });

    expect(dataOf(await resend.segments.remove(created.id))).toEqual({
      object: 'segment',
      id: created.id,
      deleted: true,
    });
    expect((await resend.segments.get(created.id)).error).toEqual({
      statusCode: 404,
      name: 'not_found',
      message: 'Audience not found',
    });
    expect((await resend.segments.get('not-a-uuid')).error).toMatchObject({
      statusCode: 404,
      message: 'Audience not found',
    });
    // Deleting what is not there still answers deleted, as Resend does.
    expect(dataOf(await resend.segments.remove(created.id))).toEqual({
      object: 'segment',
      id: created.id,
      deleted: true,
    });
  });

  it('adds a contact to a segment and removes it, by id or by email, with the reference shapes', async () => {
    const segment = await newSegment();
    const email = address('member');
    const { id } = dataOf(await resend.contacts.create({ email }));
    expect(dataOf(await resend.contacts.segments.add({ email, segmentId: segment }))).toEqual({ id: segment });
    expect(dataOf(await resend.contacts.segments.add({ contactId: id, segmentId: segment }))).toEqual({ id: segment });
    expect(dataOf(await resend.contacts.segments.list({ email })).data.map((s) => s.id)).toEqual([segment]);
    expect(dataOf(await resend.contacts.list({ segmentId: segment })).data.map((c) => c.id)).toEqual([id]);

    expect(dataOf(await resend.contacts.segments.remove({ email, segmentId: segment }))).toEqual({
      object: 'contact_segment',
      id,
      audienceId: segment,
      deleted: true,
    });
    expect(dataOf(await resend.contacts.segments.list({ contactId: id })).data).toEqual([]);
    expect((await resend.contacts.segments.add({ contactId: id, segmentId: MISSING_ID })).error).toMatchObject({
      statusCode: 404,
    });
    expect((await resend.contacts.segments.add({ email: address('nobody'), segmentId: segment })).error).toMatchObject({
      statusCode: 404,
      message: 'Contact not found',
    });
  });

  it('serves the same records under /audiences with object "audience", and the legacy audience-scoped contacts', async () => {
    const created = await call('POST', '/audiences', { name: 'Legacy' });
    expect(created).toEqual({ status: 201, body: { object: 'audience', id: expect.any(String), name: 'Legacy' } });
    const audienceId = String(created.body.id);
    expect((await call('GET', `/audiences/${audienceId}`)).body).toEqual({
      object: 'audience',
      id: audienceId,
      name: 'Legacy',
      created_at: expect.any(String),
    });
    expect(dataOf(await resend.segments.get(audienceId)).name).toBe('Legacy');
    expect(((await call('GET', '/audiences')).body.data as { id: string }[]).map((a) => a.id)).toContain(audienceId);

    // The SDK's legacy calls: a global contact, added to the segment.
    const email = address('legacy');
    const contact = dataOf(await resend.contacts.create({ audienceId, email, firstName: 'Leg' }));
    expect(dataOf(await resend.contacts.get({ email, audienceId }))).toMatchObject({
      id: contact.id,
      first_name: 'Leg',
    });
    expect(dataOf(await resend.contacts.get(contact.id)).email).toBe(email);
    expect(dataOf(await resend.contacts.list({ segmentId: audienceId })).data.map((c) => c.id)).toEqual([contact.id]);
    expect(
      ((await call('GET', `/audiences/${audienceId}/contacts`)).body.data as { id: string }[]).map((c) => c.id),
    ).toEqual([contact.id]);
    expect(dataOf(await resend.contacts.update({ id: contact.id, audienceId, lastName: 'Acy' }))).toEqual({
      object: 'contact',
      id: contact.id,
    });
    expect(dataOf(await resend.contacts.get(contact.id)).last_name).toBe('Acy');

    // The same address in a second audience is the same contact.
    const second = String((await call('POST', '/audiences', { name: 'Second' })).body.id);
    expect(dataOf(await resend.contacts.create({ audienceId: second, email }))).toEqual({
      object: 'contact',
      id: contact.id,
    });

    expect(dataOf(await resend.contacts.remove({ email, audienceId }))).toEqual({
      object: 'contact',
      contact: email,
      deleted: true,
    });
    expect((await resend.contacts.get({ email, audienceId })).error).toMatchObject({
      statusCode: 404,
      message: 'Contact not found',
    });
    expect(dataOf(await resend.contacts.get({ email, audienceId: second })).id).toBe(contact.id);
    expect(dataOf(await resend.contacts.remove({ email, audienceId }))).toEqual({
      object: 'contact',
      contact: email,
      deleted: true,
    });

    expect(await call('DELETE', `/audiences/${audienceId}`)).toEqual({
      status: 200,
      body: { object: 'audience', id: audienceId, deleted: true },
    });
    expect((await call('GET', `/audiences/${audienceId}`)).status).toBe(404);
  });
});

describe('topics and subscriptions', () => {
  it('creates, lists, reads, updates and deletes a topic; the default subscription is fixed', async () => {
    const name = unique('News ');
    const created = await call('POST', '/topics', {
      name,
      default_subscription: 'opt_out',
      description: 'Monthly',
      visibility: 'public',
    });
    expect(created).toEqual({ status: 201, body: { object: 'topic', id: expect.any(String) } });
    const id = String(created.body.id);
    const expected = {
      id,
      name,
      description: 'Monthly',
      default_subscription: 'opt_out',
      visibility: 'public',
      created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
    };
    expect(dataOf(await resend.topics.get(id))).toEqual({ object: 'topic', ...expected });
    expect(dataOf(await resend.topics.list()).data).toContainEqual(expected);

    // The SDK sends `id` in the body.
    expect(dataOf(await resend.topics.update({ id, name: 'Renamed', description: 'Weekly' }))).toEqual({
      object: 'topic',
      id,
    });
    expect(dataOf(await resend.topics.get(id))).toMatchObject({
      name: 'Renamed',
      description: 'Weekly',
      default_subscription: 'opt_out',
    });
    expect(
      (await call('PATCH', `/topics/${id}`, { visibility: 'private', default_subscription: 'opt_out' })).status,
    ).toBe(200);
    expect(await call('PATCH', `/topics/${id}`, { default_subscription: 'opt_in' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(dataOf(await resend.topics.get(id))).toMatchObject({
      visibility: 'private',
      default_subscription: 'opt_out',
    });

    expect(dataOf(await resend.topics.remove(id))).toEqual({ object: 'topic', id, deleted: true });
    expect((await resend.topics.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await resend.topics.remove(id)).error).toMatchObject({ statusCode: 404 });
  });

  it('refuses a topic without a default subscription, or with a name or description too long', async () => {
    expect(await call('POST', '/topics', { name: 'x' })).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'Missing `default_subscription` field.' },
    });
    expect(await call('POST', '/topics', { name: 'x'.repeat(51), default_subscription: 'opt_in' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(
      await call('POST', '/topics', { name: 'x', default_subscription: 'opt_in', description: 'd'.repeat(201) }),
    ).toMatchObject({ status: 422 });
    expect(await call('POST', '/topics', { name: 'x', default_subscription: 'maybe' })).toMatchObject({ status: 422 });
    expect(
      (
        await call('POST', '/topics', {
          name: 'x'.repeat(50),
          default_subscription: 'opt_in',
          description: 'd'.repeat(200),
        })
      ).status,
    ).toBe(201);
  });

  it("lists a contact's effective subscriptions and changes them with a bare array or {topics}", async () => {
    const optIn = await newTopic('opt_in');
    const optOut = await newTopic('opt_out');
    const email = address('subs');
    const { id } = dataOf(await resend.contacts.create({ email }));
    const subscriptions = async () =>
      Object.fromEntries(
        dataOf(await resend.contacts.topics.list({ email }))
          .data.filter((t) => t.id === optIn || t.id === optOut)
          .map((t) => [t.id, t.subscription]),
      );
    expect(await subscriptions()).toEqual({ [optIn]: 'opt_in', [optOut]: 'opt_out' });

    expect(
      dataOf(await resend.contacts.topics.update({ email, topics: [{ id: optIn, subscription: 'opt_out' }] })),
    ).toEqual({ object: 'contact_topics', id });
    expect(await subscriptions()).toEqual({ [optIn]: 'opt_out', [optOut]: 'opt_out' });
    expect(await call('PATCH', `/contacts/${id}/topics`, { topics: [{ id: optOut, subscription: 'opt_in' }] })).toEqual(
      { status: 200, body: { object: 'contact_topics', id } },
    );
    expect(await subscriptions()).toEqual({ [optIn]: 'opt_out', [optOut]: 'opt_in' });

    // An unknown topic among them: 404 naming it, and none of the choices is written.
    const unknown = await call('PATCH', `/contacts/${id}/topics`, [
      { id: optIn, subscription: 'opt_in' },
      { id: MISSING_ID, subscription: 'opt_in' },
    ]);
    expect(unknown).toMatchObject({
      status: 404,
      body: { name: 'not_found', message: expect.stringContaining(MISSING_ID) },
    });
    expect(await subscriptions()).toEqual({ [optIn]: 'opt_out', [optOut]: 'opt_in' });
    expect(await call('PATCH', `/contacts/${id}/topics`, [{ id: optIn, subscription: 'sometimes' }])).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await call('PATCH', `/contacts/${id}/topics`, {})).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field' },
    });
  });
});

describe('webhooks', () => {
  it('sends contact.created, contact.updated (fields, segments, topics) and contact.deleted with the reference payload', async () => {
    const segment = await newSegment();
    const topic = await newTopic('opt_in');
    const email = address('hook');
    const { id } = dataOf(await resend.contacts.create({ email, firstName: 'Hook', segments: [{ id: segment }] }));
    const [createdEvent] = await contactEvents(id, 1);
    expect(createdEvent?.json).toEqual({
      type: 'contact.created',
      created_at: expect.stringMatching(/Z$/),
      data: {
        id,
        audience_id: segment,
        segment_ids: [segment],
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        updated_at: expect.stringMatching(/Z$/),
        email,
        first_name: 'Hook',
        unsubscribed: false,
      },
    });

    dataOf(await resend.contacts.update({ id, unsubscribed: true }));
    const [, unsubscribed] = await contactEvents(id, 2);
    expect(unsubscribed?.json).toMatchObject({
      type: 'contact.updated',
      data: { unsubscribed: true, audience_id: segment, segment_ids: [segment] },
    });
    // A change that changes nothing sends nothing; leaving a segment and choosing a topic are changes.
    dataOf(await resend.contacts.update({ id, unsubscribed: true }));
    dataOf(await resend.contacts.segments.remove({ contactId: id, segmentId: segment }));
    const [, , left] = await contactEvents(id, 3);
    expect(left?.json).toMatchObject({ type: 'contact.updated', data: { unsubscribed: true, segment_ids: [] } });
    expect(left?.json.data).not.toHaveProperty('audience_id');
    dataOf(await resend.contacts.topics.update({ id, topics: [{ id: topic, subscription: 'opt_out' }] }));
    await contactEvents(id, 4);
    dataOf(await resend.contacts.remove(id));
    const events = await contactEvents(id, 5);
    expect(events.map((d) => d.json.type)).toEqual([
      'contact.created',
      'contact.updated',
      'contact.updated',
      'contact.updated',
      'contact.deleted',
    ]);
    expect(events[4]?.json.data).toEqual({
      ...createdEvent?.json.data,
      unsubscribed: true,
      segment_ids: [],
      audience_id: undefined,
      updated_at: expect.any(String),
    });
  });

  it('sends nothing for a request that is refused', async () => {
    const email = address('refused');
    expect((await resend.contacts.create({ email, properties: { missing_key: 1 } })).error).toMatchObject({
      statusCode: 422,
    });
    const { id } = dataOf(await resend.contacts.create({ email }));
    const [first] = await contactEvents(id, 1);
    expect(first?.json.type).toBe('contact.created');
    expect(receiver.deliveries.filter((d) => d.json.data.email === email)).toHaveLength(1);
  });
});

describe('another team', () => {
  it("answers 404 for the team's contacts, properties, segments and topics, and changes none of them", async () => {
    const segment = await newSegment();
    const topic = await newTopic('opt_in');
    const property = dataOf(await resend.contactProperties.create({ key: unique('own_'), type: 'string' })).id;
    const email = address('mine');
    const { id } = dataOf(await resend.contacts.create({ email, firstName: 'Mine', segments: [{ id: segment }] }));

    for (const key of [id, email]) {
      expect((await other.contacts.get(key)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
      expect((await other.contacts.update({ id: key, firstName: 'Theirs' })).error).toMatchObject({ statusCode: 404 });
      expect((await other.contacts.remove(key)).error).toMatchObject({ statusCode: 404 });
      expect((await other.contacts.segments.list({ contactId: key })).error).toMatchObject({ statusCode: 404 });
      expect((await other.contacts.topics.list({ id: key })).error).toMatchObject({ statusCode: 404 });
      expect((await other.contacts.topics.update({ id: key, topics: [] })).error).toMatchObject({ statusCode: 404 });
    }
    expect((await other.segments.get(segment)).error).toMatchObject({ statusCode: 404, message: 'Audience not found' });
    expect((await other.contacts.list({ segmentId: segment })).error).toMatchObject({ statusCode: 404 });
    expect(await call('PATCH', `/segments/${segment}`, { name: 'Theirs' }, otherKey)).toMatchObject({ status: 404 });
    expect((await call('GET', `/audiences/${segment}/contacts/${id}`, undefined, otherKey)).status).toBe(404);
    const theirSegment = dataOf(await other.segments.create({ name: 'Theirs' })).id;
    expect((await other.contacts.segments.add({ contactId: id, segmentId: theirSegment })).error).toMatchObject({
      statusCode: 404,
    });
    expect((await resend.contacts.segments.add({ contactId: id, segmentId: theirSegment })).error).toMatchObject({
      statusCode: 404,
    });
    expect((await other.contacts.create({ email: address('x'), segments: [{ id: segment }] })).error).toMatchObject({
      statusCode: 404,
    });
    expect(
      (await other.contacts.create({ email: address('x'), topics: [{ id: topic, subscription: 'opt_in' }] })).error,
    ).toMatchObject({ statusCode: 404 });
    // Deleting a segment that is not the team's answers as for any missing segment (200, deleted: true), and deletes nothing.
    expect(dataOf(await other.segments.remove(segment))).toMatchObject({ deleted: true });
    expect((await other.topics.get(topic)).error).toMatchObject({ statusCode: 404 });
    expect((await other.topics.update({ id: topic, name: 'Theirs' })).error).toMatchObject({ statusCode: 404 });
    expect((await other.topics.remove(topic)).error).toMatchObject({ statusCode: 404 });
    expect((await other.contactProperties.get(property)).error).toMatchObject({ statusCode: 404 });
    expect((await other.contactProperties.update({ id: property, fallbackValue: 'x' })).error).toMatchObject({
      statusCode: 404,
    });
    expect((await other.contactProperties.remove(property)).error).toMatchObject({ statusCode: 404 });
    // The same email is another team's own contact.
    expect(dataOf(await other.contacts.create({ email })).id).not.toBe(id);

    expect(dataOf(await resend.contacts.get(id))).toMatchObject({ first_name: 'Mine' });
    expect(dataOf(await resend.contacts.list({ segmentId: segment })).data.map((c) => c.id)).toEqual([id]);
    expect(dataOf(await resend.topics.get(topic)).name).not.toBe('Theirs');
    expect(dataOf(await resend.contactProperties.get(property)).fallbackValue).toBeNull();
  });
});
