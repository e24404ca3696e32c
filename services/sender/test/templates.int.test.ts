// Templates end to end: the official resend SDK's templates namespace through the real gateway and sender,
// and sends with `template: {id | alias, variables}` delivered to a local MX (smtp-server) over real sockets.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import {
  dataOf,
  createVerifiedDomain,
  observeBroker,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type SinkMx,
  testResend,
  useSystem,
  type SharedSystem,
  uniqueDomain,
} from '@postline/testing';

jest.setTimeout(60_000);

const RCPT = uniqueDomain('rcpt');
const MISSING_ID = '0192f1c4-7a3b-7c2d-8e4f-5a6b7c8d9e0f';
const POSTGRES_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/;

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let resend: Resend;
let other: Resend;
let apiKey: string;
let domain: string;

const world = useSystem({ rcptDomain: RCPT });

beforeAll(async () => {
  ({ dns, sink, system } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  apiKey = String((await system.admin('team', 'create', '--name', 'Templates')).api_key);
  const otherKey = String((await system.admin('team', 'create', '--name', 'Other')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  other = testResend(otherKey, system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns, events, name: `${unique('t')}.example.com` })).name;
}, 90_000);

afterAll(async () => {
  await events?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

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

/** The decoded text of a raw message (quoted-printable soft breaks and escapes undone). */
function decoded(raw: Buffer): string {
  return raw
    .toString('utf8')
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

async function messageTo(address: string): Promise<string> {
  await waitFor(`a message to ${address}`, () => sink.messages.some((m) => m.to.includes(address)), 20_000);
  return decoded(sink.messages.find((m) => m.to.includes(address))!.raw);
}

type SendOptions = Parameters<Resend['emails']['send']>[0];

describe('templates', () => {
  it('creates, reads by id and alias, lists, updates the draft, publishes, duplicates and removes', async () => {
    const alias = unique('welcome-');
    const created = dataOf(
      await resend.templates.create({
        name: 'Welcome',
        alias,
        from: `Acme <hello@${domain}>`,
        subject: 'Hi {{{NAME}}}',
        html: '<p>Hi {{{NAME}}}</p>',
        variables: [
          { key: 'NAME', type: 'string', fallbackValue: 'friend' },
          { key: 'COUNT', type: 'number' },
        ],
      }),
    );
    expect(created).toEqual({ id: expect.any(String), object: 'template' });

    const draft = dataOf(await resend.templates.get(alias));
    expect(draft).toMatchObject({
      object: 'template',
      id: created.id,
      alias,
      name: 'Welcome',
      status: 'draft',
      published_at: null,
      from: `Acme <hello@${domain}>`,
      subject: 'Hi {{{NAME}}}',
      reply_to: null,
      html: '<p>Hi {{{NAME}}}</p>',
      text: null,
      has_unpublished_versions: false,
      current_version_id: expect.any(String),
    });
    expect(draft.created_at).toMatch(POSTGRES_TIMESTAMP);
    expect(draft.variables).toEqual([
      {
        id: expect.any(String),
        key: 'NAME',
        type: 'string',
        fallback_value: 'friend',
        created_at: expect.stringMatching(POSTGRES_TIMESTAMP),
        updated_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      },
      {
        id: expect.any(String),
        key: 'COUNT',
        type: 'number',
        fallback_value: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    expect(dataOf(await resend.templates.get(created.id)).id).toBe(created.id);

    dataOf(await resend.templates.publish(alias));
    const published = dataOf(await resend.templates.get(created.id));
    expect(published).toMatchObject({
      status: 'published',
      has_unpublished_versions: false,
      current_version_id: draft.current_version_id,
    });
    expect(published.published_at).toMatch(POSTGRES_TIMESTAMP);

    dataOf(await resend.templates.update(created.id, { html: '<p>Hello {{{NAME}}}</p>', name: 'Welcome 2' }));
    const edited = dataOf(await resend.templates.get(alias));
    expect(edited).toMatchObject({
      name: 'Welcome 2',
      html: '<p>Hello {{{NAME}}}</p>',
      status: 'published',
      has_unpublished_versions: true,
    });
    expect(edited.current_version_id).not.toBe(draft.current_version_id);
    // The variables keep their identity across versions.
    // (The SDK's TemplateVariable type lacks the `id` the reference shows.)
    const variableIds = (template: { variables: unknown }) => (template.variables as { id: string }[]).map((v) => v.id);
    expect(variableIds(edited)).toEqual(variableIds(draft));

    const copy = dataOf(await resend.templates.duplicate(alias));
    const duplicate = dataOf(await resend.templates.get(copy.id));
    expect(duplicate).toMatchObject({
      name: 'Welcome 2 (copy)',
      alias: null,
      status: 'draft',
      html: '<p>Hello {{{NAME}}}</p>',
    });

    const list = dataOf(await resend.templates.list({ limit: 100 }));
    expect(list.object).toBe('list');
    const item = list.data.find((t) => t.id === created.id);
    expect(item).toEqual({
      id: created.id,
      name: 'Welcome 2',
      status: 'published',
      published_at: published.published_at,
      created_at: draft.created_at,
      updated_at: expect.stringMatching(POSTGRES_TIMESTAMP),
      alias,
      has_unpublished_versions: true,
    });
    // Newest first.
    expect(list.data.findIndex((t) => t.id === copy.id)).toBeLessThan(list.data.findIndex((t) => t.id === created.id));

    expect(dataOf(await resend.templates.remove(copy.id))).toEqual({ object: 'template', id: copy.id, deleted: true });
    expect((await resend.templates.get(copy.id)).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
      message: 'Template not found',
    });
  });

  it('refuses reserved keys naming them, more than 50 variables, bad keys and types, and a taken alias', async () => {
    const reserved = await call('POST', '/templates', {
      name: 'r',
      html: 'x',
      variables: [
        { key: 'FIRST_NAME', type: 'string' },
        { key: 'contact', type: 'string' },
        { key: 'first_name', type: 'string' },
      ],
    });
    expect(reserved.status).toBe(422);
    expect(reserved.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(reserved.body.message).toContain('`FIRST_NAME`, `contact`');
    expect(reserved.body.message).not.toContain('`first_name`');

    const many = Array.from({ length: 51 }, (_, i) => ({ key: `K${i}`, type: 'string' }));
    expect((await call('POST', '/templates', { name: 'm', html: 'x', variables: many })).status).toBe(422);
    expect((await call('POST', '/templates', { name: 'm', html: 'x', variables: many.slice(0, 50) })).status).toBe(201);

    const badFallback = await call('POST', '/templates', {
      name: 'b',
      html: 'x',
      variables: [{ key: 'N', type: 'number', fallback_value: 'two' }],
    });
    expect(badFallback.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(badFallback.body.message).toContain('`N`');
    expect(
      (await call('POST', '/templates', { name: 'b', html: 'x', variables: [{ key: 'a-b', type: 'string' }] })).status,
    ).toBe(422);
    expect(
      (await call('POST', '/templates', { name: 'b', html: 'x', variables: [{ key: 'L', type: 'list' }] })).status,
    ).toBe(422);
    expect((await call('POST', '/templates', { html: 'x' })).body).toMatchObject({
      name: 'missing_required_field',
      message: 'Missing `name` field.',
    });
    expect((await call('POST', '/templates', { name: 'x' })).body).toMatchObject({
      name: 'missing_required_field',
      message: 'Missing `html` field.',
    });

    // The docs' camelCase `fallbackValue` is taken like `fallback_value`; PATCH with null clears a field.
    const camel = await call('POST', '/templates', {
      name: 'c',
      html: '{{{N}}}',
      subject: 'S',
      variables: [{ key: 'N', type: 'string', fallbackValue: 'x' }],
    });
    expect(camel.status).toBe(201);
    const camelId = String(camel.body.id);
    expect(dataOf(await resend.templates.get(camelId)).variables?.[0]?.fallback_value).toBe('x');
    expect((await call('PATCH', `/templates/${camelId}`, { subject: null })).status).toBe(200);
    expect(dataOf(await resend.templates.get(camelId)).subject).toBeNull();

    const alias = unique('taken-');
    dataOf(await resend.templates.create({ name: 'a', html: 'x', alias }));
    const taken = await resend.templates.create({ name: 'b', html: 'x', alias });
    expect(taken.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });

  it("answers 404 for another team's template, by id and by alias, and for sends naming it", async () => {
    const alias = unique('mine-');
    const { id } = dataOf(await resend.templates.create({ name: 'Mine', html: 'x', alias }));
    dataOf(await resend.templates.publish(id));
    for (const name of [id, alias, MISSING_ID]) {
      expect((await other.templates.get(name)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
      expect((await other.templates.update(name, { name: 'x' })).error).toMatchObject({ statusCode: 404 });
      expect((await other.templates.publish(name)).error).toMatchObject({ statusCode: 404 });
      expect((await other.templates.remove(name)).error).toMatchObject({ statusCode: 404 });
    }
    const send = await other.emails.send({ to: `x@${RCPT}`, template: { id } } as SendOptions);
    expect(send.error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Template not found' });
    expect(dataOf(await resend.templates.get(id)).name).toBe('Mine');
  });
});

describe('sending with a template', () => {
  it('delivers the published version rendered: values escaped in html and not in text, template defaults applied', async () => {
    const alias = unique('order-');
    const { id } = dataOf(
      await resend.templates.create({
        name: 'Order',
        alias,
        from: `Shop <orders@${domain}>`,
        subject: 'Order for {{{NAME}}}',
        replyTo: `help@${domain}`,
        html: '<p>Hi {{{NAME}}}, {{{COUNT}}} items, {{{NOTE|no note}}}</p>',
        text: 'Hi {{{NAME}}}, {{{COUNT}}} items',
        variables: [
          { key: 'NAME', type: 'string' },
          { key: 'COUNT', type: 'number', fallbackValue: 1 },
        ],
      }),
    );
    dataOf(await resend.templates.publish(id));
    // A draft edit does not reach sends until it is published.
    dataOf(await resend.templates.update(alias, { html: '<p>DRAFT {{{NAME}}}</p>' }));

    const to = `${unique('order')}@${RCPT}`;
    const sent = dataOf(
      await resend.emails.send({ to, template: { id: alias, variables: { NAME: 'Ada <3 & co' } } } as SendOptions),
    );
    const email = dataOf(await resend.emails.get(sent.id));
    expect(email).toMatchObject({
      from: `Shop <orders@${domain}>`,
      subject: 'Order for Ada <3 & co',
      reply_to: [`help@${domain}`],
      html: '<p>Hi Ada &lt;3 &amp; co, 1 items, no note</p>',
      text: 'Hi Ada <3 & co, 1 items',
    });
    const raw = await messageTo(to);
    expect(raw).toContain('<p>Hi Ada &lt;3 &amp; co, 1 items, no note</p>');
    expect(raw).toContain('Hi Ada <3 & co, 1 items');
    expect(raw).toMatch(/^Subject: Order for Ada <3 & co/m);
    expect(raw).not.toContain('DRAFT');

    // The request's from and subject win over the template's; publishing makes the edit the sent version.
    dataOf(await resend.templates.publish(alias));
    const to2 = `${unique('order')}@${RCPT}`;
    const second = dataOf(
      await resend.emails.send({
        from: `Other <news@${domain}>`,
        subject: 'Own subject',
        to: to2,
        template: { id, variables: { NAME: 'Bo' } },
      } as SendOptions),
    );
    expect(dataOf(await resend.emails.get(second.id))).toMatchObject({
      from: `Other <news@${domain}>`,
      subject: 'Own subject',
      html: '<p>DRAFT Bo</p>',
    });
    expect(await messageTo(to2)).toContain('<p>DRAFT Bo</p>');
  });

  it('refuses a draft-only template, a missing variable, a wrong type and html beside a template, naming them', async () => {
    const { id } = dataOf(
      await resend.templates.create({
        name: 'Strict',
        from: `Acme <hello@${domain}>`,
        subject: 'S',
        html: '<p>{{{NAME}}} {{{AGE}}}</p>',
        variables: [
          { key: 'NAME', type: 'string' },
          { key: 'AGE', type: 'number' },
        ],
      }),
    );
    const to = `strict@${RCPT}`;
    const draftOnly = await resend.emails.send({
      to,
      template: { id, variables: { NAME: 'a', AGE: 1 } },
    } as SendOptions);
    expect(draftOnly.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(draftOnly.error?.message).toContain('not published');

    dataOf(await resend.templates.publish(id));
    const missing = await resend.emails.send({ to, template: { id, variables: { NAME: 'a' } } } as SendOptions);
    expect(missing.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(missing.error?.message).toContain('`AGE`');
    const wrongType = await resend.emails.send({
      to,
      template: { id, variables: { NAME: 'a', AGE: 'old' } },
    } as SendOptions);
    expect(wrongType.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(wrongType.error?.message).toContain('`AGE`');
    const withHtml = await call('POST', '/emails', {
      to,
      html: '<p>x</p>',
      template: { id, variables: { NAME: 'a', AGE: 1 } },
    });
    expect(withHtml.body).toMatchObject({ statusCode: 422, name: 'validation_error' });
    const unknown = await resend.emails.send({ to, template: { id: MISSING_ID } } as SendOptions);
    expect(unknown.error).toMatchObject({ statusCode: 404, name: 'not_found', message: 'Template not found' });
    expect(
      dataOf(await resend.emails.send({ to, template: { id, variables: { NAME: 'a', AGE: 1 } } } as SendOptions)).id,
    ).toEqual(expect.any(String));
  });

  it('renders each email of a batch, and in permissive mode refuses only the item with a bad template', async () => {
    const alias = unique('batch-');
    dataOf(
      await resend.templates.create({
        name: 'B',
        alias,
        from: `Acme <hello@${domain}>`,
        subject: 'B',
        html: '<p>{{{N}}}</p>',
        variables: [{ key: 'N', type: 'string' }],
      }),
    );
    dataOf(await resend.templates.publish(alias));
    const to = `${unique('batch')}@${RCPT}`;
    const batch = dataOf(
      await resend.batch.send([
        { to, template: { id: alias, variables: { N: 'one' } } },
        { from: `Acme <hello@${domain}>`, to, subject: 'plain', html: '<p>two</p>' },
      ] as Parameters<Resend['batch']['send']>[0]),
    );
    expect(batch.data).toHaveLength(2);
    expect(dataOf(await resend.emails.get(batch.data[0]!.id)).html).toBe('<p>one</p>');

    const permissive = dataOf(
      await resend.batch.send(
        [
          { to, template: { id: alias, variables: { N: 'ok' } } },
          { to, template: { id: MISSING_ID } },
        ] as Parameters<Resend['batch']['send']>[0],
        { batchValidation: 'permissive' },
      ),
    );
    expect(permissive).toMatchObject({
      data: [{ id: expect.any(String) }],
      errors: [{ index: 1, message: 'Template not found' }],
    });
  });
});
