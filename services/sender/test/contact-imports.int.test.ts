// Contact imports end to end: CSV uploads through the real gateway (multipart, streamed to the sender) with
// the official resend SDK (contacts.imports) and plain fetch where it cannot go, processed in the background
// by the sender's `sender.import-contacts` consumer (tests/e2e/restarts.test.ts: a sender killed or stopped
// mid-file resumes the import).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Kysely } from 'kysely';
import type { Resend } from 'resend';
import { createDb } from '@postline/platform';
import {
  dataOf,
  useSystem,
  startWebhookReceiver,
  waitFor,
  type SharedSystem,
  type WebhookReceiver,
  testResend,
} from '@postline/testing';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';

jest.setTimeout(60_000);

let system: SharedSystem;
let receiver: WebhookReceiver;
let db: Kysely<SenderDb>;
let resend: Resend;
let other: Resend;
let apiKey: string;
let plan: string;
let seats: string;

const world = useSystem();

beforeAll(async () => {
  ({ system } = world);
  apiKey = String((await system.admin('team', 'create', '--name', 'Imports')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  other = testResend(String((await system.admin('team', 'create', '--name', 'Other')).api_key), system.apiUrl);
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA }).db;
  receiver = await startWebhookReceiver();
  dataOf(await resend.webhooks.create({ endpoint: receiver.url, events: ['contact.created', 'contact.updated'] }));
  plan = unique('plan_');
  seats = unique('seats_');
  dataOf(await resend.contactProperties.create({ key: plan, type: 'string' }));
  dataOf(await resend.contactProperties.create({ key: seats, type: 'number' }));
}, 90_000);

afterAll(async () => {
  await db?.destroy();
  await receiver?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;
const MISSING_ID = '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f';
const POSTGRES_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/;

type ImportRecord = {
  object: string;
  id: string;
  status: string;
  created_at: string;
  completed_at: string | null;
  counts: { total: number; created: number; updated: number; skipped: number; failed: number };
  error: string | null;
  errors?: { row: number; reason: string }[];
};

/** GET /contacts/imports/{id} over plain HTTP: the record with our `errors` field. */
async function record(id: string): Promise<ImportRecord> {
  const res = await fetch(`${system.apiUrl}/contacts/imports/${id}`, {
    headers: { authorization: `Bearer ${apiKey}`, 'user-agent': 'test' },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as ImportRecord;
}

async function finished(id: string, timeoutMs = 20_000): Promise<ImportRecord> {
  let last: ImportRecord | undefined;
  await waitFor(
    `import ${id} to finish`,
    async () => {
      last = await record(id);
      return last.status === 'completed' || last.status === 'failed';
    },
    timeoutMs,
  );
  return last as ImportRecord;
}

type CreateImport = Parameters<Resend['contacts']['imports']['create']>[0];

async function importCsv(csv: string, options: Omit<CreateImport, 'file'> = {}): Promise<string> {
  const created = dataOf(
    await resend.contacts.imports.create({ file: new Blob([csv], { type: 'text/csv' }), ...options }),
  );
  expect(created).toEqual({ object: 'contact_import', id: expect.any(String) });
  return created.id;
}

/** POST /contacts/imports with a form of our making (what the SDK cannot send); the status and body. */
async function upload(
  fields: Record<string, string | Blob>,
  key = apiKey,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${system.apiUrl}/contacts/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'user-agent': 'test' },
    body: formOf(fields),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function formOf(fields: Record<string, string | Blob>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

const csvFile = (text: string) => new Blob([text], { type: 'text/csv' });

describe('POST /contacts/imports', () => {
  it('imports good rows, records bad ones by row number, folds a repeated address, and applies segments and topics', async () => {
    const segment = dataOf(await resend.segments.create({ name: unique('imported') })).id;
    const topic = dataOf(await resend.topics.create({ name: unique('news'), defaultSubscription: 'opt_in' })).id;
    const tag = unique('i');
    const csv = [
      'Courriel,Prénom,Nom,Désabonné,Formule,Sièges',
      `ann.${tag}@Example.com,Ann,Lee,false,pro,3`,
      `not-an-email,Bad,Row,,,`,
      `bob.${tag}@example.com,"Bob, ""Bobby""","Multi`,
      `line",yes,free,`,
      `cat.${tag}@example.com,Cat,,,team,three`,
      `ANN.${tag}@example.com,Annie,,,,7`,
      '',
    ].join('\r\n');
    const id = await importCsv(csv, {
      columnMap: {
        email: 'Courriel',
        firstName: 'Prénom',
        lastName: 'Nom',
        unsubscribed: 'Désabonné',
        properties: { [plan]: { column: 'Formule', type: 'string' }, [seats]: { column: 'Sièges', type: 'number' } },
      },
      onConflict: 'upsert',
      segments: [{ id: segment }],
      topics: [{ id: topic, subscription: 'opt_out' }],
    });

    const done = await finished(id);
    expect(done).toEqual({
      object: 'contact_import',
      id,
      status: 'completed',
      created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      completed_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      counts: { total: 5, created: 2, updated: 1, skipped: 0, failed: 2 },
      error: null,
      errors: [
        { row: 2, reason: 'Invalid `email`: it must be an email address such as `name@example.com`.' },
        { row: 4, reason: `The contact property \`${seats}\` must be a number.` },
      ],
    });
    // The SDK's own read: the reference's shape.
    expect(dataOf(await resend.contacts.imports.get(id))).toMatchObject({
      object: 'contact_import',
      id,
      status: 'completed',
      counts: done.counts,
    });

    // The later row of an address updated the earlier one; an empty value left a value as it was.
    const ann = dataOf(await resend.contacts.get({ email: `ann.${tag}@example.com` }));
    expect(ann).toMatchObject({
      email: `ann.${tag}@example.com`,
      first_name: 'Annie',
      last_name: 'Lee',
      unsubscribed: false,
      properties: { [plan]: { value: 'pro', type: 'string' }, [seats]: { value: 7, type: 'number' } },
    });
    const bob = dataOf(await resend.contacts.get({ email: `bob.${tag}@example.com` }));
    expect(bob).toMatchObject({
      first_name: 'Bob, "Bobby"',
      last_name: 'Multi\r\nline',
      unsubscribed: true,
      properties: { [plan]: { value: 'free', type: 'string' } },
    });
    expect((await resend.contacts.get({ email: `cat.${tag}@example.com` })).error).toMatchObject({ statusCode: 404 });

    const members = dataOf(await resend.contacts.list({ segmentId: segment })).data.map((contact) => contact.email);
    expect(members.sort()).toEqual([`ann.${tag}@example.com`, `bob.${tag}@example.com`]);
    expect(dataOf(await resend.contacts.topics.list({ id: bob.id })).data).toContainEqual(
      expect.objectContaining({ id: topic, subscription: 'opt_out' }),
    );

    // No contact.created per imported row: a contact created afterwards is the first one announced.
    const after = dataOf(await resend.contacts.create({ email: `after.${tag}@example.com` })).id;
    await receiver.waitFor('contact.created of the contact made after the import', (deliveries) =>
      deliveries.some((d) => d.json.data.id === after),
    );
    const announced = receiver.deliveries.map((d) => String(d.json.data.email));
    expect(announced.filter((email) => email.includes(tag))).toEqual([`after.${tag}@example.com`]);
  });

  it('skips contacts that exist by default, and upsert updates them leaving empty values and unsubscribed alone', async () => {
    const tag = unique('u');
    const existing = `old.${tag}@example.com`;
    const { id: contactId } = dataOf(
      await resend.contacts.create({
        email: existing,
        firstName: 'Old',
        unsubscribed: true,
        properties: { [plan]: 'free', [seats]: 1 },
      }),
    );
    // Matched by header name: no column_map.
    const csv = `email,first_name,last_name,unsubscribed,${plan},${seats}\n${existing.toUpperCase()},New,Name,,,5\nnew.${tag}@example.com,Fresh,,,,\n`;

    const skipped = await finished(await importCsv(csv));
    expect(skipped.counts).toEqual({ total: 2, created: 1, updated: 0, skipped: 1, failed: 0 });
    expect(dataOf(await resend.contacts.get(contactId))).toMatchObject({
      first_name: 'Old',
      last_name: null,
      unsubscribed: true,
    });

    const upserted = await finished(await importCsv(csv, { onConflict: 'upsert' }));
    expect(upserted.counts).toEqual({ total: 2, created: 0, updated: 2, skipped: 0, failed: 0 });
    expect(dataOf(await resend.contacts.get(contactId))).toMatchObject({
      email: existing,
      first_name: 'New',
      last_name: 'Name',
      unsubscribed: true,
      properties: { [plan]: { value: 'free', type: 'string' }, [seats]: { value: 5, type: 'number' } },
    });
  });

  it('takes a flat column_map (property keys beside the fields) and JSON ids as segments', async () => {
    const tag = unique('f');
    const segment = dataOf(await resend.segments.create({ name: unique('flat') })).id;
    const { status, body } = await upload({
      file: csvFile(`Mail,Tier\nflat.${tag}@example.com,gold\n`),
      column_map: JSON.stringify({ email: 'Mail', [plan]: 'Tier' }),
      segments: JSON.stringify([segment]),
    });
    expect(status).toBe(201);
    expect((await finished(String(body.id))).counts).toMatchObject({ created: 1 });
    const contact = dataOf(await resend.contacts.get({ email: `flat.${tag}@example.com` }));
    expect(contact.properties).toEqual({ [plan]: { value: 'gold', type: 'string' } });
    expect(dataOf(await resend.contacts.segments.list({ contactId: contact.id })).data.map((s) => s.id)).toEqual([
      segment,
    ]);
  });

  it('refuses a bad upload up front with the reference error names, writing nothing', async () => {
    const file = csvFile('email\na@example.com\n');
    const before = (await call('GET', '/contacts/imports?limit=100')).data.length;
    expect(await upload({ column_map: '{}' })).toEqual({
      status: 422,
      body: { statusCode: 422, name: 'missing_required_field', message: 'Missing `file` field.' },
    });
    const json = await fetch(`${system.apiUrl}/contacts/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'user-agent': 'test' },
      body: JSON.stringify({ file: 'email\na@example.com' }),
    });
    expect(json.status).toBe(422);
    expect(await upload({ file, segments: JSON.stringify([{ id: MISSING_ID }]) })).toEqual({
      status: 404,
      body: { statusCode: 404, name: 'not_found', message: `Segment \`${MISSING_ID}\` not found` },
    });
    const otherSegment = dataOf(await other.segments.create({ name: 'theirs' })).id;
    expect(await upload({ file, segments: JSON.stringify([{ id: otherSegment }]) })).toMatchObject({
      status: 404,
      body: { name: 'not_found' },
    });
    expect(await upload({ file, topics: JSON.stringify([{ id: MISSING_ID, subscription: 'opt_in' }]) })).toMatchObject({
      status: 404,
      body: { name: 'not_found', message: `Topic \`${MISSING_ID}\` not found` },
    });
    expect(await upload({ file, topics: JSON.stringify([{ id: MISSING_ID }]) })).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field' },
    });
    expect(await upload({ file, on_conflict: 'replace' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error' },
    });
    expect(await upload({ file, column_map: '{not json' })).toMatchObject({
      status: 422,
      body: { name: 'validation_error', message: expect.stringContaining('`column_map`') },
    });
    expect(await upload({ file, column_map: JSON.stringify({ first_name: 'First' }) })).toMatchObject({
      status: 422,
      body: {
        name: 'validation_error',
        message: "The column `First` of `column_map.first_name` is not in the file's header.",
      },
    });
    expect(
      await upload({ file, column_map: JSON.stringify({ properties: { no_such_key: { column: 'email' } } }) }),
    ).toMatchObject({
      status: 422,
      body: { name: 'validation_error', message: expect.stringContaining('`no_such_key`') },
    });
    expect(await upload({ file: csvFile('mail,name\na@example.com,A\n') })).toMatchObject({
      status: 422,
      body: { name: 'validation_error', message: expect.stringContaining('`email` column') },
    });
    expect(await upload({ file: csvFile('') })).toMatchObject({
      status: 422,
      body: { name: 'validation_error', message: expect.stringContaining('empty') },
    });
    expect((await call('GET', '/contacts/imports?limit=100')).data).toHaveLength(before);
  });

  it('refuses a file over 50 MB: the sender past 50 MB, the gateway past the body limit', async () => {
    const header = 'email\n';
    const over = new Uint8Array(50 * 1024 * 1024 + 1).fill(0x61);
    over.set(new TextEncoder().encode(header));
    expect(await upload({ file: new Blob([over], { type: 'text/csv' }) })).toEqual({
      status: 413,
      body: { statusCode: 413, name: 'validation_error', message: 'The `file` is larger than 50 MB.' },
    });
    const tooLarge = {
      statusCode: 413,
      name: 'validation_error',
      message: 'The request body is too large: the file of a contact import may be at most 50 MB.',
    };
    expect(await upload({ file: new Blob([over, over], { type: 'text/csv' }) })).toEqual({
      status: 413,
      body: tooLarge,
    });

    // Of unknown length (chunked): the gateway counts it on its way and stops at the limit.
    const form = new Response(formOf({ file: new Blob([over, over], { type: 'text/csv' }) }));
    const chunked = await fetch(`${system.apiUrl}/contacts/imports`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'user-agent': 'test',
        'content-type': String(form.headers.get('content-type')),
      },
      body: form.body,
      duplex: 'half',
    } as RequestInit);
    expect({ status: chunked.status, body: await chunked.json() }).toEqual({ status: 413, body: tooLarge });
  });
});

async function call(
  method: string,
  path: string,
  key = apiKey,
): Promise<{ status: number; data: ImportRecord[]; body: Record<string, unknown> }> {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'user-agent': 'test' },
  });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, data: (body.data ?? []) as ImportRecord[], body };
}

describe('GET /contacts/imports', () => {
  it("lists the team's imports newest first, by status, a page at a time; another team's import is not found", async () => {
    const first = await importCsv('email\nlist1@example.com\n');
    const second = await importCsv('email\nlist2@example.com\n');
    await finished(first);
    await finished(second);
    const page = dataOf(await resend.contacts.imports.list({ limit: 1 }));
    expect(page).toMatchObject({ object: 'list', has_more: true });
    expect(page.data.map((item) => item.id)).toEqual([second]);
    expect(page.data[0]).toEqual({
      object: 'contact_import',
      id: second,
      status: 'completed',
      created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      completed_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      counts: { total: 1, created: 1, updated: 0, skipped: 0, failed: 0 },
      error: null,
    });
    expect(dataOf(await resend.contacts.imports.list({ limit: 1, after: second })).data.map((item) => item.id)).toEqual(
      [first],
    );
    expect(dataOf(await resend.contacts.imports.list({ status: 'completed' })).data.map((item) => item.id)).toContain(
      first,
    );
    expect(dataOf(await resend.contacts.imports.list({ status: 'failed' })).data.map((item) => item.id)).not.toContain(
      first,
    );
    expect((await call('GET', '/contacts/imports?status=done')).status).toBe(422);

    expect((await other.contacts.imports.get(first)).error).toEqual({
      statusCode: 404,
      name: 'not_found',
      message: 'Contact import not found',
    });
    expect(dataOf(await other.contacts.imports.list()).data).toEqual([]);
    expect((await resend.contacts.imports.get('not-an-id')).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
  });
});
