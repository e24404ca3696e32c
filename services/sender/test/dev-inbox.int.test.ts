// The development inbox (DEV_INBOX on): every message is made as it would go out (composed, tracked, signed
// with the domain's key) and kept in the install instead of reaching any MX, with the events any delivery
// gives; a domain the team has only added may send. Read back through the API like a mailbox. Through the
// official resend SDK, the real gateway and sender.
import { beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Resend } from 'resend';
import { dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';

jest.setTimeout(60_000);

const world = useSystem({ env: { DEV_INBOX: 'true' } });
let system: SharedSystem;
let apiKey: string;
let resend: Resend;
let domain: string;

async function get(path: string, key = apiKey) {
  const r = await fetch(`${system.apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, type: r.headers.get('content-type'), body: Buffer.from(await r.arrayBuffer()) };
}
async function getJson<T = Record<string, unknown>>(path: string, key = apiKey): Promise<{ status: number; body: T }> {
  const { status, body } = await get(path, key);
  return { status, body: JSON.parse(body.toString('utf8')) as T };
}
async function del(path: string, key = apiKey) {
  const r = await fetch(`${system.apiUrl}${path}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

type Item = { id: string; email_id: string; from: string; to: string[]; subject: string; size: number };
type Send = Parameters<Resend['emails']['send']>[0];

beforeAll(async () => {
  ({ system } = world);
  apiKey = String((await system.admin('team', 'create', '--name', 'Staging')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  domain = `staging-${Date.now()}.example.com`;
  // Added, never verified: no DNS record of it exists anywhere.
  dataOf(await resend.domains.create({ name: domain }));
});

/** Sends once the sender has learnt of the added domain (its read model follows the domain's events). */
async function send(options: Partial<Send>): Promise<string> {
  let id = '';
  await waitFor('the email accepted', async () => {
    const { data, error } = await resend.emails.send({
      from: `Staging <hello@${domain}>`,
      to: 'someone@gmail.com',
      subject: 'Hello',
      text: 'Hello',
      ...options,
    } as Send);
    if (error && !/not added/.test(error.message)) throw new Error(JSON.stringify(error));
    id = data?.id ?? '';
    return id !== '';
  });
  return id;
}

const lastEventOf = async (id: string) => String((await getJson(`/emails/${id}`)).body.last_event);

describe('the development inbox', () => {
  it('says it is on', async () => {
    const { body } = await getJson('/dev-inbox');
    expect(body).toEqual({ object: 'dev_inbox', enabled: true, count: 0 });
  });

  it('keeps a message from an unverified domain to a real address, signed, with the delivered event, and serves it', async () => {
    const id = await send({
      to: ['someone@gmail.com', 'other@outlook.com'],
      subject: 'Your receipt',
      html: '<p>Thanks <b>Ann</b></p>',
      text: 'Thanks Ann',
      attachments: [{ filename: 'receipt.txt', content: Buffer.from('total: 12 EUR') }],
    });
    await waitFor('delivered into the inbox', async () => (await lastEventOf(id)) === 'delivered');

    // One copy per recipient domain, as one SMTP transaction each would have carried.
    const list = await getJson<{ data: Item[]; has_more: boolean }>('/dev-inbox/messages');
    const mine = list.body.data.filter((item) => item.email_id === id);
    expect(mine.map((item) => item.to).sort()).toEqual([['other@outlook.com'], ['someone@gmail.com']]);
    expect(mine[0]).toMatchObject({ from: `Staging <hello@${domain}>`, subject: 'Your receipt' });

    const detail = await getJson<{
      headers: { name: string; value: string }[];
      html: string;
      text: string;
      attachments: unknown[];
      envelope_from: string;
    }>(`/dev-inbox/messages/${mine[0]!.id}`);
    expect(detail.status).toBe(200);
    const signature = detail.body.headers.find((header) => header.name === 'DKIM-Signature')?.value ?? '';
    expect(signature).toContain(`d=${domain}`);
    expect(detail.body.headers[0]?.name).toBe('DKIM-Signature');
    expect(detail.body.html).toContain('Thanks <b>Ann</b>');
    expect(detail.body.text.trim()).toBe('Thanks Ann');
    expect(detail.body.attachments).toEqual([{ filename: 'receipt.txt', content_type: 'text/plain', size: 13 }]);
    expect(detail.body.envelope_from).toContain(`@send.${domain}`);

    const raw = await get(`/dev-inbox/messages/${mine[0]!.id}/raw`);
    expect(raw.type).toBe('message/rfc822');
    expect(raw.body.toString('utf8')).toContain('Subject: Your receipt');
    expect(raw.body.length).toBe(mine[0]!.size);

    // The attempt says where the message went: the inbox, no MX.
    const attempts = await getJson<{ data: { mx: string; ip: string | null; transcript: string[] }[] }>(
      `/emails/${id}/attempts`,
    );
    expect(attempts.body.data.map((attempt) => attempt.mx)).toEqual(['dev-inbox', 'dev-inbox']);
    expect(attempts.body.data[0]?.ip).toBeNull();
    expect(attempts.body.data[0]?.transcript[0]).toContain('Kept in the development inbox');
    const recipients = await getJson<{ data: { status: string; last_code: number }[] }>(`/emails/${id}/recipients`);
    expect(recipients.body.data.map((r) => [r.status, r.last_code])).toEqual([
      ['delivered', 250],
      ['delivered', 250],
    ]);
  });

  it('finds messages by subject, sender or recipient, pages them, and keeps them from other teams', async () => {
    const first = await send({ to: 'finance@corp.example', subject: 'Invoice 7731' });
    const second = await send({ to: 'ops@corp.example', subject: 'Weekly digest' });
    await waitFor(
      'both kept',
      async () => (await lastEventOf(first)) === 'delivered' && (await lastEventOf(second)) === 'delivered',
    );

    const found = async (q: string) =>
      (await getJson<{ data: Item[] }>(`/dev-inbox/messages?q=${encodeURIComponent(q)}`)).body.data.map(
        (item) => item.email_id,
      );
    expect(await found('invoice 77')).toEqual([first]);
    expect(await found('OPS@corp')).toEqual([second]);
    expect(await found(`hello@${domain}`)).toEqual(expect.arrayContaining([first, second]));
    expect(await found('100%_sure')).toEqual([]);

    const page = await getJson<{ data: Item[]; has_more: boolean }>('/dev-inbox/messages?limit=1');
    expect(page.body).toMatchObject({ has_more: true });
    expect(page.body.data[0]?.email_id).toBe(second);
    const next = await getJson<{ data: Item[] }>(`/dev-inbox/messages?limit=1&after=${page.body.data[0]!.id}`);
    expect(next.body.data[0]?.email_id).toBe(first);

    const other = String((await system.admin('team', 'create', '--name', 'Elsewhere')).api_key);
    expect((await getJson<{ data: Item[] }>('/dev-inbox/messages', other)).body.data).toEqual([]);
    const id = page.body.data[0]!.id;
    expect((await get(`/dev-inbox/messages/${id}`, other)).status).toBe(404);
    expect((await get(`/dev-inbox/messages/${id}/raw`, other)).status).toBe(404);
    expect((await del(`/dev-inbox/messages/${id}`, other)).status).toBe(404);
    expect((await getJson('/dev-inbox/messages/not-an-id')).body).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
    expect((await getJson('/dev-inbox/messages?limit=0')).body).toMatchObject({ statusCode: 422 });
  });

  it('refuses a domain the team has not added, and deletes one message or all of them', async () => {
    const { error } = await resend.emails.send({
      from: 'hello@never-added.example.com',
      to: 'someone@gmail.com',
      subject: 'x',
      text: 'x',
    });
    expect(error).toMatchObject({ statusCode: 403, name: 'validation_error' });
    expect(error?.message).toContain('The never-added.example.com domain is not added');

    const before = (await getJson<{ count: number }>('/dev-inbox')).body.count;
    expect(before).toBeGreaterThanOrEqual(4);
    const one = (await getJson<{ data: Item[] }>('/dev-inbox/messages?limit=1')).body.data[0]!;
    expect((await del(`/dev-inbox/messages/${one.id}`)).body).toEqual({
      object: 'dev_inbox_message',
      id: one.id,
      deleted: true,
    });
    expect((await get(`/dev-inbox/messages/${one.id}`)).status).toBe(404);
    expect((await del('/dev-inbox/messages')).body).toEqual({ object: 'dev_inbox', deleted: before - 1 });
    expect((await getJson('/dev-inbox')).body).toMatchObject({ enabled: true, count: 0 });
    // The emails and their events stay.
    expect(await lastEventOf(one.email_id)).toBe('delivered');
  });
});
