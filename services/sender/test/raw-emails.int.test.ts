// Raw emails end to end (POST /emails with message/rfc822, what the SMTP relay submits): curl-like
// requests through the real gateway, sender, scheduler, webhook-dispatcher and domain-verifier on RabbitMQ
// and Postgres; the outside world faked over real sockets (a DNS server, an smtp-server sink as the
// recipients' MX, a webhook receiver).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  observeBroker,
  startWebhookReceiver,
  verifyDelivery,
  type BrokerObserver,
  type DnsServer,
  type ObservedMessage,
  type SinkMessage,
  type SinkMx,
  testResend,
  useSystem,
  type SharedSystem,
} from '@postline/testing';

jest.setTimeout(60_000);

const RCPT = 'rawrcpt.test';

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let resend: Resend;
let apiKey: string;
let domain: string;
let dkimRecord: string;

const world = useSystem({ rcptDomain: RCPT, env: { POSTLINE_DELAY_SCALE: '0.00002' } });

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
  const team = await system.admin('team', 'create', '--name', 'Raw');
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  const verified = await createVerifiedDomain({
    resend,
    dns,
    events,
    name: `raw${Date.now().toString(36)}.example.com`,
  });
  domain = verified.name;
  dkimRecord = verified.dkimRecord;
}, 90_000);

afterAll(async () => {
  await events?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

type Answer = { status: number; body: Record<string, unknown> };

/** POST /emails with a raw message, as curl or the relay sends it. */
async function postRaw(
  message: string | Buffer,
  opts: { key?: string; envelopeFrom?: string; envelopeTo?: string; idempotencyKey?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${opts.key ?? apiKey}`,
    'content-type': 'message/rfc822',
  };
  if (opts.envelopeFrom !== undefined) headers['postline-envelope-from'] = opts.envelopeFrom;
  if (opts.envelopeTo !== undefined) headers['postline-envelope-to'] = opts.envelopeTo;
  if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
  const r = await fetch(`${system.apiUrl}/emails`, { method: 'POST', headers, body: message });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

const mime = (lines: string[]) => lines.join('\r\n');

function eventFor(type: string, emailId: string, timeoutMs = 20_000): Promise<ObservedMessage> {
  return events.waitFor(`${type} ${emailId}`, (m) => m.routingKey === type && m.envelope.data.email_id === emailId, {
    timeoutMs,
  });
}

async function dkimResult(message: SinkMessage) {
  const raw = message.raw.toString('utf8');
  const selector = /s=([^;\s]+)/.exec(raw)?.[1];
  const result = await dkimVerify(message.raw, {
    resolver: (name: string, type: string) => {
      if (type === 'TXT' && name === `${selector}._domainkey.${domain}`) return Promise.resolve([[dkimRecord]]);
      return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    },
  });
  return result.results[0];
}

describe('a raw email to a real MX', () => {
  it("delivers the client's MIME (Bcc removed, Message-ID and Date added), DKIM-signed, from the VERP address, with tags", async () => {
    const to = `${unique('ok')}@${RCPT}`;
    const cc = `${unique('cc')}@${RCPT}`;
    const hidden = `${unique('hidden')}@${RCPT}`;
    const message = mime([
      `From: Acme Team <hello@${domain}>`,
      `To: Jane <${to}>`,
      `Cc: ${cc}`,
      `Bcc: ${hidden}`,
      `Reply-To: support@${domain}`,
      'Subject: =?UTF-8?Q?Caf=C3=A9_opens?=',
      'X-Entity-Ref-ID: ref-raw-1',
      `List-Unsubscribe: <https://${domain}/u/1>`,
      'X-Postline-Tags: kind=welcome, plan=pro',
      'Postline-Idempotency-Key: from-the-relay',
      'MIME-Version: 1.0',
      'Content-Type: multipart/alternative; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello there',
      '--b1',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Hello <b>there</b></p>',
      '--b1--',
      '',
    ]);
    const r = await postRaw(message, { envelopeFrom: `hello@${domain}`, envelopeTo: `${to},${cc},${hidden}` });
    expect(r.status).toBe(200);
    const id = String(r.body.id);

    const sent = await eventFor('email.sent', id);
    expect(sent.envelope.data).toMatchObject({
      email_id: id,
      from: `Acme Team <hello@${domain}>`,
      to: [`Jane <${to}>`],
      subject: 'Café opens',
      tags: { kind: 'welcome', plan: 'pro' },
    });
    await waitForRecipients(id, 3);

    const copies = sink.messages.filter((m) => m.raw.toString().includes(`<${id}@${domain}>`));
    expect(copies.flatMap((m) => m.to).sort()).toEqual([to, cc, hidden].sort());
    const delivered = copies[0] as SinkMessage;
    expect(delivered.from).toMatch(
      new RegExp(`^b\\.${id.replaceAll('-', '')}\\.(\\d+|x)\\.[a-z2-7]{10}@send\\.${domain.replaceAll('.', '\\.')}$`),
    );
    const raw = delivered.raw.toString('utf8');
    expect(raw).toMatch(/^DKIM-Signature: /);
    expect(raw).toMatch(new RegExp(`^Message-ID: <${id}@${domain.replaceAll('.', '\\.')}>\r$`, 'm'));
    expect(raw).toMatch(/^Date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000\r$/m);
    expect(raw).toMatch(/^X-Entity-Ref-ID: ref-raw-1\r$/m);
    expect(raw).toContain(`List-Unsubscribe: <https://${domain}/u/1>`);
    expect(raw).toContain('<p>Hello <b>there</b></p>');
    expect(raw).not.toMatch(/^Bcc:/im);
    expect(raw).not.toContain(hidden);
    expect(raw).not.toMatch(/^X-Postline-Tags:/im);
    expect(raw).not.toMatch(/^Postline-Idempotency-Key:/im);
    const dkim = await dkimResult(delivered);
    expect(dkim?.status.result).toBe('pass');
    expect(dkim?.signingDomain).toBe(domain);

    const { data } = await resend.emails.get(id);
    expect(data).toMatchObject({
      object: 'email',
      id,
      from: `Acme Team <hello@${domain}>`,
      to: [`Jane <${to}>`],
      cc: [cc],
      bcc: [hidden],
      reply_to: [`support@${domain}`],
      subject: 'Café opens',
      html: '<p>Hello <b>there</b></p>',
      text: 'Hello there',
      tags: [
        { name: 'kind', value: 'welcome' },
        { name: 'plan', value: 'pro' },
      ],
    });
  });

  it("keeps the client's Message-ID and Date, and sends to the headers' recipients when the envelope names none", async () => {
    const to = `${unique('ok')}@${RCPT}`;
    const hidden = `${unique('bcc')}@${RCPT}`;
    const messageId = `<${unique('client')}@${domain}>`;
    const message = mime([
      `From: hello@${domain}`,
      `To: ${to}`,
      `Bcc: ${hidden}`,
      'Subject: Mine',
      `Message-ID: ${messageId}`,
      'Date: Tue, 24 Nov 2026 10:00:00 +0000',
      '',
      'plain text',
      '',
    ]);
    const r = await postRaw(message);
    expect(r.status).toBe(200);
    const id = String(r.body.id);
    await waitForRecipients(id, 2);
    const copies = sink.messages.filter((m) => m.raw.toString().includes(messageId));
    expect(copies.flatMap((m) => m.to).sort()).toEqual([to, hidden].sort());
    const raw = (copies[0] as SinkMessage).raw.toString();
    expect(raw.match(/^Message-ID:/gim)).toHaveLength(1);
    expect(raw).toContain('Date: Tue, 24 Nov 2026 10:00:00 +0000');
    expect(raw).not.toMatch(/^Bcc:/im);
    expect((await dkimResult(copies[0] as SinkMessage))?.status.result).toBe('pass');
    const { data } = await resend.emails.get(id);
    // The text part as the message has it, with the line break that ends its body.
    expect(data).toMatchObject({ to: [to], bcc: [hidden], text: 'plain text\n', html: null });
  });
});

/** Waits until `count` of the email's recipients got email.delivered. */
async function waitForRecipients(id: string, count: number) {
  await events.waitFor(
    `${count} delivered for ${id}`,
    () =>
      events.messages
        .filter((m) => m.routingKey === 'email.delivered' && m.envelope.data.email_id === id)
        .flatMap((m) => m.envelope.data.to as string[]).length >= count,
    { timeoutMs: 20_000 },
  );
}

describe('refusals', () => {
  it('refuses a From domain that is not verified (403), and an envelope sender from another domain (403)', async () => {
    const r = await postRaw(mime(['From: a@not-mine.example.com', `To: x@${RCPT}`, 'Subject: x', '', 'x']));
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      statusCode: 403,
      name: 'validation_error',
      message:
        'The not-mine.example.com domain is not verified. Please, add and verify your domain on the /domains API.',
    });
    const envelope = await postRaw(mime([`From: a@${domain}`, `To: x@${RCPT}`, 'Subject: x', '', 'x']), {
      envelopeFrom: 'b@other.example.com',
    });
    expect(envelope.status).toBe(403);
    expect(envelope.body.message).toMatch(/other\.example\.com domain is not verified/);
  });

  it('refuses a message without recipients, garbage and a duplicate Subject with 422, never a 500', async () => {
    const none = await postRaw(mime([`From: a@${domain}`, 'Subject: x', '', 'x']), { envelopeTo: '' });
    expect(none).toMatchObject({ status: 422, body: { statusCode: 422, name: 'missing_required_field' } });
    const garbage = await postRaw(Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0a, 0x0d, 0x00, 0x41]));
    expect(garbage.status).toBe(422);
    expect(garbage.body.name).toMatch(/validation_error|missing_required_field/);
    const text = await postRaw('just some words, no header at all');
    expect(text).toMatchObject({
      status: 422,
      body: { name: 'missing_required_field', message: 'The message has no `From` header.' },
    });
    const twice = await postRaw(mime([`From: a@${domain}`, `To: x@${RCPT}`, 'Subject: one', 'Subject: two', '', 'x']));
    expect(twice).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    const badTags = await postRaw(
      mime([`From: a@${domain}`, `To: x@${RCPT}`, 'X-Postline-Tags: no value', 'Subject: x', '', 'x']),
    );
    expect(badTags).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    const many = Array.from({ length: 51 }, (_, i) => `r${i}@${RCPT}`).join(',');
    expect((await postRaw(mime([`From: a@${domain}`, 'Subject: x', '', 'x']), { envelopeTo: many })).status).toBe(422);
  });
});

describe('idempotency, keys and events', () => {
  it('answers the same id for the same key and bytes, and 409 for other bytes', async () => {
    const key = unique('idem');
    const message = mime([`From: a@${domain}`, `To: ${unique('ok')}@${RCPT}`, 'Subject: once', '', 'x']);
    const first = await postRaw(message, { idempotencyKey: key });
    expect(first.status).toBe(200);
    const again = await postRaw(message, { idempotencyKey: key });
    expect(again).toEqual(first);
    const other = await postRaw(`${message}more`, { idempotencyKey: key });
    expect(other).toMatchObject({ status: 409, body: { name: 'invalid_idempotent_request' } });
    await eventFor('email.delivered', String(first.body.id));
    expect(sink.messages.filter((m) => m.raw.toString().includes(`<${String(first.body.id)}@`))).toHaveLength(1);
  });

  it('takes a sending_access key', async () => {
    const { data, error } = await resend.apiKeys.create({ name: 'relay', permission: 'sending_access' });
    if (error || !data) throw new Error(JSON.stringify(error));
    const r = await postRaw(
      mime([`From: a@${domain}`, `To: ${unique('ok')}@${RCPT}`, 'Subject: restricted', '', 'x']),
      { key: data.token },
    );
    expect(r.status).toBe(200);
    await eventFor('email.delivered', String(r.body.id));
  });

  it('sends a webhook the same events as for a JSON email', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { data: hook, error } = await resend.webhooks.create({
        endpoint: `${receiver.url}/hooks`,
        events: ['email.sent', 'email.delivered'],
      });
      if (error || !hook) throw new Error(JSON.stringify(error));
      const raw = await postRaw(
        mime([
          `From: Acme <hello@${domain}>`,
          'To: delivered+raw@postline.test',
          'Subject: Hello',
          'X-Resend-Tags: kind=raw',
          '',
          'Hi',
          '',
        ]),
      );
      expect(raw.status).toBe(200);
      const json = await resend.emails.send({
        from: `Acme <hello@${domain}>`,
        to: 'delivered+raw@postline.test',
        subject: 'Hello',
        text: 'Hi',
        tags: [{ name: 'kind', value: 'raw' }],
      });
      if (json.error || !json.data) throw new Error(JSON.stringify(json.error));
      const ids = [String(raw.body.id), json.data.id];
      await receiver.waitFor(
        'sent and delivered of both',
        (ds) => ds.filter((d) => ids.includes(String(d.json.data.email_id))).length >= 4,
        20_000,
      );
      const of = (id: string) => receiver.deliveries.filter((d) => d.json.data.email_id === id);
      for (const delivery of of(ids[0] as string)) expect(verifyDelivery(delivery, hook.signing_secret)).toBe(true);
      const shape = (id: string) =>
        of(id)
          .map((d) => ({
            type: d.json.type,
            data: { ...d.json.data, email_id: 'id', created_at: 'at', message_id: 'mid' },
          }))
          .sort((a, b) => String(a.type).localeCompare(String(b.type)));
      expect(shape(ids[0] as string)).toEqual(shape(ids[1] as string));
      expect(shape(ids[0] as string).map((d) => d.type)).toEqual(['email.delivered', 'email.sent']);
    } finally {
      await receiver.close();
    }
  });
});
