// Signup forms end to end through the real gateway: the /forms resource (another team's answers 404), the
// hosted page and its submits as a browser and the embeddable snippet post them, double opt-in (the
// confirmation email reaches the recipients' MX, a local sink, DKIM-signed; contact.created, verified with
// standardwebhooks, only once the link's button is pressed, once), an existing contact updated rather than
// duplicated, a form without double opt-in, the bot trap (honeypot, too fast), the per-address limit (429
// page), and expired or forged links (clear pages). Tokens the test needs are signed with the system's
// POSTLINE_SECRET_KEY, as the sender signs them.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  mimePartOf,
  startWebhookReceiver,
  testResend,
  uniqueDomain,
  useSystem,
  verifyDelivery,
  waitFor,
  type SharedSystem,
  type SinkMx,
  type WebhookReceiver,
} from '@postline/testing';
import { createFormTokens } from '../src/forms/index.ts';

jest.setTimeout(90_000);

const RCPT = uniqueDomain('forms');
const world = useSystem({ rcptDomain: RCPT });

let system: SharedSystem;
let sink: SinkMx;
let receiver: WebhookReceiver;
let signingSecret: string;
let resend: Resend;
let other: Resend;
let apiKey: string;
let otherKey: string;
let domain: string;
let segmentId: string;
let topicId: string;
let tokens: ReturnType<typeof createFormTokens>;

beforeAll(async () => {
  ({ system, sink } = world);
  tokens = createFormTokens(String(system.env.POSTLINE_SECRET_KEY));
  const team = await system.admin('team', 'create', '--name', 'Forms');
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  otherKey = String((await system.admin('team', 'create', '--name', 'Other')).api_key);
  other = testResend(otherKey, system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns: world.dns, env: system.env, name: `${unique('f')}.example.com` }))
    .name;
  segmentId = dataOf(await resend.segments.create({ name: 'Newsletter' })).id;
  topicId = dataOf(await resend.topics.create({ name: 'Product news', defaultSubscription: 'opt_out' })).id;
  receiver = await startWebhookReceiver();
  const hook = await resend.webhooks.create({ endpoint: receiver.url, events: ['contact.created', 'contact.updated'] });
  signingSecret = hook.data!.signing_secret;
}, 120_000);

afterAll(async () => {
  await receiver?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;
const address = (prefix: string) => `${unique(prefix)}@${RCPT}`;

type Form = { id: string; public_id: string; hosted_url: string; embed_html: string; counts: Record<string, number> };

async function api(method: string, path: string, body?: unknown, key = apiKey) {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function newForm(settings: Record<string, unknown> = {}): Promise<Form> {
  const created = await api('POST', '/forms', {
    name: `Newsletter ${unique('n')}`,
    segment_ids: [segmentId],
    topic_ids: [topicId],
    fields: ['first_name'],
    from: `News <news@${domain}>`,
    ...settings,
  });
  expect(created.status).toBe(201);
  return created.body as unknown as Form;
}

async function page(url: string, init: RequestInit = {}) {
  const res = await fetch(url, { redirect: 'manual', ...init });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * A submit as a browser posts the hosted page, shown `shownMsAgo` ago (its render token signed here), or as
 * the snippet posts it (null: no token). Each from a loopback address of its own, as submits are limited per
 * client address (and the other test files submit too).
 */
function submit(form: Form, fields: Record<string, string>, shownMsAgo: number | null = 5_000) {
  const rendered: Record<string, string> =
    shownMsAgo === null
      ? {}
      : { rendered: tokens.render({ formId: form.id, renderedAt: new Date(Date.now() - shownMsAgo) }) };
  return postFrom(ownAddress(), form.hosted_url, new URLSearchParams({ website: '', ...fields, ...rendered }));
}

/** A random loopback address (Linux routes all of 127/8 to loopback). */
function ownAddress(): string {
  const byte = () => 2 + Math.floor(Math.random() * 250);
  return `127.${byte()}.${byte()}.${byte()}`;
}

async function confirmationLinkTo(to: string): Promise<string> {
  await waitFor(`the confirmation email to ${to}`, () => sink.messages.some((m) => m.to.includes(to)), 30_000);
  const message = sink.messages.find((m) => m.to.includes(to))!;
  expect(message.raw.toString('latin1')).toMatch(new RegExp(`DKIM-Signature:[^]*d=${domain.replace(/\./g, '\\.')}`));
  const link = /https?:\/\/\S+\/confirm\/\S+/.exec(mimePartOf(message.raw, 'text/plain') ?? '')?.[0];
  expect(link).toBeDefined();
  return link!;
}

const eventsAbout = (email: string, type: string) =>
  receiver.deliveries.filter((d) => d.json.type === type && d.json.data.email === email);

async function contactOf(email: string) {
  return (await resend.contacts.get({ email })).data;
}

describe('the forms resource', () => {
  it('creates, lists, reads, changes and deletes a form; another team’s id answers 404', async () => {
    const form = await newForm();
    expect(form).toMatchObject({
      object: 'form',
      segment_ids: [segmentId],
      topic_ids: [topicId],
      fields: ['first_name'],
      double_opt_in: true,
      enabled: true,
      counts: { submissions: 0, pending: 0, confirmed: 0 },
    });
    expect(form.hosted_url).toBe(`${system.apiUrl}/f/${form.public_id}`);
    expect(form.embed_html).toContain(`action="${form.hosted_url}"`);
    expect(((await api('GET', '/forms')).body.data as Form[]).map((f) => f.id)).toContain(form.id);
    const changed = await api('PATCH', `/forms/${form.id}`, { enabled: false, thank_you_message: 'Merci' });
    expect(changed.body).toMatchObject({ enabled: false, thank_you_message: 'Merci', double_opt_in: true });
    expect((await page(form.hosted_url)).status).toBe(404);

    for (const [method, body] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      expect((await api(method, `/forms/${form.id}`, body, otherKey)).status).toBe(404);
    }
    expect(((await api('GET', '/forms', undefined, otherKey)).body.data as Form[]).map((f) => f.id)).not.toContain(
      form.id,
    );
    expect((await api('DELETE', `/forms/${form.id}`)).body).toEqual({ object: 'form', id: form.id, deleted: true });
    expect((await api('GET', `/forms/${form.id}`)).status).toBe(404);
  });

  it('refuses a form it could not keep: an unverified from, another team’s segment, no from with double opt-in', async () => {
    const otherSegment = dataOf(await other.segments.create({ name: 'Theirs' })).id;
    const refusals = [
      [{ from: 'news@unverified.example.com' }, /unverified\.example\.com domain is not verified/],
      [{ segment_ids: [otherSegment] }, new RegExp(`Segment \`${otherSegment}\` not found`)],
      [{ from: null }, /Missing `from` field/],
      [{ from: 'onboarding@postline.test' }, /only with the development inbox on/],
    ] as const;
    for (const [settings, message] of refusals) {
      const answer = await api('POST', '/forms', {
        name: 'Refused',
        segment_ids: [segmentId],
        from: `n@${domain}`,
        ...settings,
      });
      expect(answer.status).toBe(422);
      expect(answer.body.message).toMatch(message);
    }
    // Without double opt-in no email is sent, so no from is needed.
    expect((await api('POST', '/forms', { name: 'Open', double_opt_in: false })).status).toBe(201);
  });
});

describe('a hosted form with double opt-in', () => {
  it('shows the form, sends a confirmation, and makes the contact only when its link’s button is pressed', async () => {
    const form = await newForm();
    const shown = await page(form.hosted_url);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(shown.headers.get('x-postline-team-id')).toBeNull();
    expect(shown.text).toContain('<label for="email">Email</label>');
    expect(shown.text).toContain('name="rendered"');

    const email = address('ada');
    const taken = await submit(form, { email, first_name: 'Ada' });
    expect(taken.status).toBe(200);
    expect(taken.text).toContain('we sent you an email');
    const link = await confirmationLinkTo(email);
    expect(await contactOf(email)).toBeNull();
    expect((await api('GET', `/forms/${form.id}`)).body.counts).toEqual({ submissions: 1, pending: 1, confirmed: 0 });

    // Opening the link (as a mail scanner does) confirms nothing.
    const opened = await page(link);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('Confirm my subscription');
    expect(await contactOf(email)).toBeNull();

    const confirmed = await page(link, { method: 'POST', body: new URLSearchParams() });
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain('is confirmed');
    const contact = (await contactOf(email))!;
    expect(contact).toMatchObject({ email, first_name: 'Ada', unsubscribed: false });
    expect(dataOf(await resend.contacts.segments.list({ contactId: contact.id })).data.map((s) => s.id)).toEqual([
      segmentId,
    ]);
    expect(dataOf(await resend.contacts.topics.list({ id: contact.id })).data).toEqual([
      expect.objectContaining({ id: topicId, subscription: 'opt_in' }),
    ]);
    await receiver.waitFor(
      'contact.created of the confirmed signup',
      () => eventsAbout(email, 'contact.created').length === 1,
    );
    const created = eventsAbout(email, 'contact.created')[0]!;
    expect(verifyDelivery(created, signingSecret)).toBe(true);
    expect(created.json.data).toMatchObject({
      id: contact.id,
      segment_ids: [segmentId],
      source: { type: 'form', form_id: form.id },
    });

    // Confirming again changes nothing and says so; no second event (a later signup's event arrives first).
    const again = await page(link, { method: 'POST', body: new URLSearchParams() });
    expect(again.status).toBe(200);
    expect(again.text).toContain('was confirmed already');
    const marker = address('marker');
    await submit(await newForm({ double_opt_in: false }), { email: marker }, null);
    await receiver.waitFor('the marker’s contact.created', () => eventsAbout(marker, 'contact.created').length === 1);
    expect(eventsAbout(email, 'contact.created')).toHaveLength(1);
    expect(eventsAbout(email, 'contact.updated')).toHaveLength(0);
    expect((await api('GET', `/forms/${form.id}`)).body.counts).toEqual({ submissions: 1, pending: 0, confirmed: 1 });
  });

  it('updates an existing contact rather than making another, without contact.created', async () => {
    const form = await newForm();
    const email = address('grace');
    const { id } = dataOf(await resend.contacts.create({ email, firstName: 'Grace', unsubscribed: true }));
    await receiver.waitFor('the API’s contact.created', () => eventsAbout(email, 'contact.created').length === 1);
    // From the embeddable snippet: no render token.
    expect((await submit(form, { email, first_name: 'Someone else' }, null)).status).toBe(200);
    const link = await confirmationLinkTo(email);
    expect((await page(link, { method: 'POST', body: new URLSearchParams() })).status).toBe(200);
    await receiver.waitFor('contact.updated of the signup', () => eventsAbout(email, 'contact.updated').length === 1);
    expect(eventsAbout(email, 'contact.updated')[0]!.json.data).toMatchObject({
      id,
      segment_ids: [segmentId],
      unsubscribed: false,
      first_name: 'Grace',
    });
    expect(eventsAbout(email, 'contact.created')).toHaveLength(1);
  });

  it('sends nothing to an address confirmed already, and keeps it confirmed', async () => {
    const form = await newForm();
    const email = address('twice');
    await submit(form, { email });
    expect((await page(await confirmationLinkTo(email), { method: 'POST', body: new URLSearchParams() })).status).toBe(
      200,
    );
    const sent = sink.messages.filter((m) => m.to.includes(email)).length;
    expect((await submit(form, { email })).status).toBe(200);
    expect((await api('GET', `/forms/${form.id}`)).body.counts).toEqual({ submissions: 2, pending: 0, confirmed: 1 });
    // A later signup's confirmation arrives; none more for this address.
    const later = address('later');
    await submit(form, { email: later });
    await confirmationLinkTo(later);
    expect(sink.messages.filter((m) => m.to.includes(email))).toHaveLength(sent);
  });

  it("without double opt-in, never undoes an existing contact's unsubscribe or topic choice", async () => {
    const form = await newForm({ double_opt_in: false });
    const email = address('left');
    const { id } = dataOf(
      await resend.contacts.create({ email, unsubscribed: true, topics: [{ id: topicId, subscription: 'opt_out' }] }),
    );
    // Anyone may type anyone's address into such a form.
    expect((await submit(form, { email, first_name: 'Mallory' })).status).toBe(200);
    await receiver.waitFor('contact.updated of the signup', () => eventsAbout(email, 'contact.updated').length === 1);
    expect(await contactOf(email)).toMatchObject({ id, unsubscribed: true, first_name: 'Mallory' });
    expect(dataOf(await resend.contacts.segments.list({ contactId: id })).data.map((s) => s.id)).toEqual([segmentId]);
    expect(dataOf(await resend.contacts.topics.list({ id })).data).toEqual([
      expect.objectContaining({ id: topicId, subscription: 'opt_out' }),
    ]);
  });

  it('answers an expired link with 410 and a forged or foreign one with 404, as pages', async () => {
    const form = await newForm();
    const email = address('late');
    await submit(form, { email });
    const link = await confirmationLinkTo(email);
    const token = link.slice(link.lastIndexOf('/') + 1);
    const signed = tokens.confirmed(token)!;
    const base = link.slice(0, link.lastIndexOf('/') + 1);
    const expired = `${base}${tokens.confirmation({ ...signed, expiresAt: new Date(Date.now() - 1000) })}`;
    for (const method of ['GET', 'POST']) {
      const answer = await page(expired, method === 'POST' ? { method, body: new URLSearchParams() } : {});
      expect(answer.status).toBe(410);
      expect(answer.headers.get('content-type')).toContain('text/html');
      expect(answer.text).toContain('This confirmation link has expired. Sign up again to get a new one.');
    }
    const forged = `${base}${token.slice(0, -3)}${token.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    const otherForm = await newForm();
    const foreign = `${otherForm.hosted_url}/confirm/${token}`;
    for (const url of [forged, foreign]) {
      const answer = await page(url, { method: 'POST', body: new URLSearchParams() });
      expect(answer.status).toBe(404);
      expect(answer.text).toContain('This confirmation link is not valid.');
    }
    expect(await contactOf(email)).toBeNull();
  });
});

describe('a hosted form’s guards', () => {
  it('answers a filled honeypot and a too fast submit as a taken one, and writes and sends nothing', async () => {
    const form = await newForm({ thank_you_message: 'Thanks!' });
    const bot = address('bot');
    const honeypot = await submit(form, { email: bot, website: 'https://spam.example' }, null);
    const tooFast = await submit(form, { email: bot }, 100);
    for (const answer of [honeypot, tooFast]) {
      expect(answer.status).toBe(200);
      expect(answer.text).toContain('Thanks!');
    }
    // A real signup after them is sent; the trapped ones never were.
    const person = address('person');
    await submit(form, { email: person });
    await confirmationLinkTo(person);
    expect(sink.messages.some((m) => m.to.includes(bot))).toBe(false);
    expect((await api('GET', `/forms/${form.id}`)).body.counts).toEqual({ submissions: 1, pending: 1, confirmed: 0 });
  });

  it('shows the form again with what to correct, writing nothing', async () => {
    const form = await newForm();
    const answer = await submit(form, { email: 'not-an-address', first_name: 'Ada' });
    expect(answer.status).toBe(422);
    expect(answer.text).toContain('Enter an email address such as name@example.com.');
    expect(answer.text).toContain('value="Ada"');
    expect((await api('GET', `/forms/${form.id}`)).body.counts).toEqual({ submissions: 0, pending: 0, confirmed: 0 });
  });

  it('makes the contact at once without double opt-in, and redirects to the form’s redirect_url', async () => {
    const form = await newForm({ double_opt_in: false, redirect_url: 'https://example.com/welcome' });
    const email = address('now');
    const answer = await submit(form, { email, first_name: 'Now' });
    expect(answer.status).toBe(303);
    expect(answer.location).toBe('https://example.com/welcome');
    expect(await contactOf(email)).toMatchObject({ email, first_name: 'Now' });
    await receiver.waitFor(
      'contact.created without double opt-in',
      () => eventsAbout(email, 'contact.created').length === 1,
    );
    expect(eventsAbout(email, 'contact.created')[0]!.json.data.source).toEqual({ type: 'form', form_id: form.id });
  });

  it('limits submits per client address, answering 429 with a page', async () => {
    const form = await newForm();
    // Honeypot submits: counted as any other, and they write nothing. The limit is the default, 10 a minute.
    const from = ownAddress();
    const answers: Answer[] = [];
    for (let i = 0; i < 11; i++) {
      answers.push(await postFrom(from, form.hosted_url, new URLSearchParams({ email: address('r'), website: 'x' })));
    }
    expect(answers.slice(0, 10).every((a) => a.status === 200)).toBe(true);
    const refused = answers[10]!;
    expect(refused.status).toBe(429);
    expect(refused.contentType).toContain('text/html');
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(refused.text).toContain('Too many signups were sent from your network in the last minute.');
    // Another address is not refused by the address's limit: accepted as soon as the link's own limit (10
    // requests a second, which the 11 submits may have reached) lets it through.
    const other = address('other');
    await waitFor(
      'another address accepted',
      async () => (await submit(form, { email: other }, null)).status === 200,
      10_000,
    );
  });
});

type Answer = { status: number; retryAfter?: string; location?: string; contentType?: string; text: string };

/** A POST from a given local address (the gateway limits per peer address). */
function postFrom(localAddress: string, url: string, body: URLSearchParams) {
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'],
            location: res.headers.location,
            contentType: res.headers['content-type'],
            text,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body.toString());
  });
}
