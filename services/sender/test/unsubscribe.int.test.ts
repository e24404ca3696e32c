// A broadcast recipient's unsubscribe link end to end through the real gateway: the RFC 8058 one-click POST
// as Gmail (urlencoded) and Yahoo (multipart/form-data) send it, the preference page (a GET changes
// nothing) and its form, tampered and foreign tokens, the per-link rate limit and a disabled team's links.
// Tokens are signed here as the broadcasts sign them, with the system's POSTLINE_SECRET_KEY.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import {
  dataOf,
  nextSecond,
  startWebhookReceiver,
  verifyDelivery,
  type WebhookReceiver,
  testResend,
  useSystem,
  waitFor,
  type SharedSystem,
} from '@postline/testing';
import { createUnsubscribeSigner, unsubscribeUrl } from '../src/engagement/domain/unsubscribe-links.ts';

jest.setTimeout(60_000);

const SECRET_KEY = 'e2e-secret-key-not-for-production';
const GONE = { statusCode: 404, name: 'not_found', message: 'This link is not valid or has expired.' };

let system: SharedSystem;
let receiver: WebhookReceiver;
let signingSecret: string;
let teamId: string;
let apiKey: string;
let resend: Resend;
let otherTeamId: string;
let other: Resend;
const signer = createUnsubscribeSigner(SECRET_KEY);

const world = useSystem();

beforeAll(async () => {
  ({ system } = world);
  const team = await system.admin('team', 'create', '--name', 'Unsubscribe');
  teamId = String(team.team_id);
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  const otherTeam = await system.admin('team', 'create', '--name', 'Other');
  otherTeamId = String(otherTeam.team_id);
  other = testResend(String(otherTeam.api_key), system.apiUrl);
  receiver = await startWebhookReceiver();
  const hook = await resend.webhooks.create({ endpoint: receiver.url, events: ['contact.updated'] });
  signingSecret = hook.data!.signing_secret;
}, 90_000);

afterAll(async () => {
  await receiver?.close();
}, 30_000);

let counter = 0;
const address = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}@example.com`;

async function newContact(client = resend): Promise<string> {
  return dataOf(await client.contacts.create({ email: address('reader'), firstName: 'Ada' })).id;
}

/** A recipient's link, as a broadcast of `team` to `contactId` carries it. */
function linkOf(contactId: string, team = teamId): string {
  return unsubscribeUrl(system.apiUrl, signer.sign({ teamId: team, contactId, broadcastId: randomUUID() }));
}

async function unsubscribed(contactId: string, client = resend): Promise<boolean> {
  return dataOf(await client.contacts.get({ id: contactId })).unsubscribed;
}

/** The contact.updated deliveries about one contact, each verified. */
function updatesOf(contactId: string) {
  const about = receiver.deliveries.filter((d) => d.json.data.id === contactId);
  for (const delivery of about) expect(verifyDelivery(delivery, signingSecret)).toBe(true);
  return about;
}

async function post(url: string, body: string | URLSearchParams | FormData, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', body, headers, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const oneClickForm = () => new URLSearchParams({ 'List-Unsubscribe': 'One-Click' });

describe('the one-click unsubscribe (RFC 8058)', () => {
  it('unsubscribes on a urlencoded POST as Gmail sends it, answering 200 without a redirect, with contact.updated', async () => {
    const contactId = await newContact();
    const url = linkOf(contactId);
    // Gmail: no cookies, no auth, this exact body.
    const answer = await post(url, 'List-Unsubscribe=One-Click', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('You have been unsubscribed.\n');
    expect(answer.headers.get('location')).toBeNull();
    expect(answer.headers.get('x-postline-team-id')).toBeNull();
    expect(await unsubscribed(contactId)).toBe(true);
    await receiver.waitFor('contact.updated of the unsubscribed contact', () => updatesOf(contactId).length === 1);
    expect(updatesOf(contactId)[0]!.json).toMatchObject({
      type: 'contact.updated',
      data: { id: contactId, unsubscribed: true },
    });

    // Again: nothing changes, so nothing is published; the answer is the same.
    expect((await post(url, oneClickForm())).status).toBe(200);
    const marker = await newContact();
    await post(linkOf(marker), oneClickForm());
    await receiver.waitFor('the marker contact.updated', () => updatesOf(marker).length === 1);
    expect(updatesOf(contactId)).toHaveLength(1);
  });

  it('unsubscribes on a multipart/form-data POST as Yahoo sends it', async () => {
    const contactId = await newContact();
    const form = new FormData();
    form.append('List-Unsubscribe', 'One-Click');
    const answer = await post(linkOf(contactId), form);
    expect(answer.status).toBe(200);
    expect(await unsubscribed(contactId)).toBe(true);
    await receiver.waitFor('contact.updated after the multipart POST', () => updatesOf(contactId).length === 1);
  });

  it('refuses a body that is neither the one-click nor the page form, and a JSON body, changing nothing', async () => {
    const contactId = await newContact();
    const url = linkOf(contactId);
    const empty = await post(url, new URLSearchParams({ something: 'else' }));
    expect(empty.status).toBe(422);
    expect(JSON.parse(empty.text)).toMatchObject({ statusCode: 422, name: 'validation_error' });
    const json = await post(url, JSON.stringify({ 'List-Unsubscribe': 'One-Click' }), {
      'content-type': 'application/json',
    });
    expect(json.status).toBe(415);
    expect(JSON.parse(json.text)).toMatchObject({ statusCode: 415, name: 'validation_error' });
    const huge = await post(url, `List-Unsubscribe=One-Click&pad=${'x'.repeat(20_000)}`, {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(huge.status).toBe(413);
    expect(await unsubscribed(contactId)).toBe(false);
  });
});

describe('the preference page', () => {
  it('is served without a key as our own strict page, and a GET changes nothing', async () => {
    const contactId = await newContact();
    const url = linkOf(contactId);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('cache-control')).toBe('private, no-store');
    expect(page.headers.get('x-postline-team-id')).toBeNull();
    const html = await page.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('<form method="post">');
    expect((await fetch(url, { method: 'HEAD' })).status).toBe(200);
    expect(await unsubscribed(contactId)).toBe(false);
    const marker = await newContact();
    await post(linkOf(marker), oneClickForm());
    await receiver.waitFor('the marker contact.updated', () => updatesOf(marker).length === 1);
    expect(updatesOf(contactId)).toHaveLength(0);
  });

  it("applies the form's topic choice and unsubscribe_all in one contact.updated, and subscribes again", async () => {
    const topic = await createTopic({
      name: `News ${counter++}`,
      default_subscription: 'opt_in',
      visibility: 'public',
    });
    const contactId = await newContact();
    const url = linkOf(contactId);
    const saved = await post(
      url,
      new URLSearchParams({ form: 'preferences', [`topics[${topic}]`]: 'opt_out', unsubscribe_all: '1' }),
    );
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('Your preferences have been saved.');
    expect(await unsubscribed(contactId)).toBe(true);
    const topics = dataOf(await resend.contacts.topics.list({ id: contactId })).data;
    expect(topics.find((t) => t.id === topic)?.subscription).toBe('opt_out');
    await receiver.waitFor('contact.updated of the form', () => updatesOf(contactId).length === 1);

    // The page's own form without the box ticked subscribes again.
    await post(url, new URLSearchParams({ form: 'preferences', [`topics[${topic}]`]: 'opt_out' }));
    expect(await unsubscribed(contactId)).toBe(false);
    await receiver.waitFor('contact.updated of the second form', () => updatesOf(contactId).length === 2);
  });

  it('keeps a private topic the contact is not opted in to out of the page and out of reach of the form', async () => {
    const hidden = await createTopic({
      name: `Hidden ${counter++}`,
      default_subscription: 'opt_out',
      visibility: 'private',
    });
    const contactId = await newContact();
    const url = linkOf(contactId);
    expect(await (await fetch(url)).text()).not.toContain(hidden);
    const answer = await post(url, new URLSearchParams({ [`topics[${hidden}]`]: 'opt_in' }));
    expect(answer.status).toBe(200);
    const topics = dataOf(await resend.contacts.topics.list({ id: contactId })).data;
    expect(topics.find((t) => t.id === hidden)?.subscription).toBe('opt_out');
  });
});

describe('tokens that name nothing', () => {
  it('answers 404 with the share links’ body to a tampered, foreign, malformed or deleted-contact token, changing nothing', async () => {
    const contactId = await newContact();
    const url = linkOf(contactId);
    const token = url.split('/').pop()!;
    const flip = (char: string) => (char === 'A' ? 'B' : 'A');
    const tampered = [
      `${token.slice(0, 10)}${flip(token[10]!)}${token.slice(11)}`,
      `${token.slice(0, -1)}${flip(token.at(-1)!)}`,
    ];
    const foreignSigner = createUnsubscribeSigner('another-secret-key');
    const foreign = foreignSigner.sign({ teamId, contactId, broadcastId: randomUUID() });
    // Signed rightly, but naming this contact under the other team: the contact is not that team's.
    const otherTeam = signer.sign({ teamId: otherTeamId, contactId, broadcastId: randomUUID() });
    for (const bad of [...tampered, foreign, otherTeam]) {
      const badUrl = unsubscribeUrl(system.apiUrl, bad);
      const page = await fetch(badUrl);
      expect(page.status).toBe(404);
      expect(await page.json()).toEqual(GONE);
      const oneClick = await post(badUrl, oneClickForm());
      expect(oneClick.status).toBe(404);
      expect(JSON.parse(oneClick.text)).toEqual(GONE);
    }
    // A malformed token never reaches the sender: the gateway's public routes take only the signed shape.
    for (const path of ['/unsubscribe/abc.def', `/unsubscribe/${token}x`, `/unsubscribe/${token}/`]) {
      const res = await fetch(`${system.apiUrl}${path}`, { method: 'POST', body: oneClickForm() });
      expect([401, 404]).toContain(res.status);
    }
    expect(await unsubscribed(contactId)).toBe(false);

    dataOf(await resend.contacts.remove({ id: contactId }));
    expect((await fetch(url)).status).toBe(404);
    expect((await post(url, oneClickForm())).status).toBe(404);
    // The other team's own contact is untouched by this team's links.
    const theirs = await newContact(other);
    expect((await post(linkOf(theirs), oneClickForm())).status).toBe(404);
    expect(await unsubscribed(theirs, other)).toBe(false);
  });
});

describe('the gateway', () => {
  it('takes at most 10 requests a second per link', async () => {
    const url = linkOf(await newContact());
    const burst = async () => {
      await nextSecond();
      return Promise.all(
        Array.from({ length: 15 }, () => fetch(url).then(async (r) => ({ status: r.status, body: await r.text() }))),
      );
    };
    let answers = await burst();
    for (let again = 0; again < 3 && answers.filter((r) => r.status === 200).length > 10; again++)
      answers = await burst();
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited).toHaveLength(5);
    expect(JSON.parse(limited[0]!.body)).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
    // Another recipient's link has its own budget.
    expect((await fetch(linkOf(await newContact()))).status).toBe(200);
  });

  it("answers 404 to a disabled team's links, and its one-click changes nothing", async () => {
    const team = await system.admin('team', 'create', '--name', 'Disabled');
    const owner = testResend(String(team.api_key), system.apiUrl);
    const contactId = await newContact(owner);
    const url = linkOf(contactId, String(team.team_id));
    expect((await fetch(url)).status).toBe(200);
    await system.admin('team', 'disable', '--team', String(team.team_id));
    // The gateways learn of the change through Postgres's NOTIFY, a moment after the command's commit.
    await waitFor("the disabled team's link to be gone", async () => (await fetch(url)).status === 404);
    const page = await fetch(url);
    expect(page.status).toBe(404);
    expect(await page.json()).toEqual(GONE);
    const oneClick = await post(url, oneClickForm());
    expect(oneClick.status).toBe(404);
    expect(JSON.parse(oneClick.text)).toEqual(GONE);
    await system.admin('team', 'enable', '--team', String(team.team_id));
    await waitFor("the enabled team's link back", async () => (await fetch(url)).status === 200);
    expect(await unsubscribed(contactId, owner)).toBe(false);
  });

  it('refuses other methods on a link', async () => {
    const res = await fetch(linkOf(await newContact()), { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });
});

async function createTopic(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${system.apiUrl}/topics`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}
