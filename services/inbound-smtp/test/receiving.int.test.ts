// Receiving end to end: nodemailer as the sending MTA → the real MX (inbound-smtp process) → the official
// resend SDK reading `/emails/receiving` through the real gateway, and a webhook receiver getting
// `email.received` from the real dispatcher; the domains verified by the real domain-verifier against a
// local DNS server.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import nodemailer from 'nodemailer';
import type { Resend } from 'resend';
import { PUBLIC_LINK_GONE } from '@postline/contracts';
import {
  createReceivingDomain,
  dataOf,
  observeBroker,
  rcptReply,
  startWebhookReceiver,
  verifyDelivery,
  type BrokerObserver,
  type DnsServer,
  type ReceivingDomain,
  type WebhookReceiver,
  testResend,
  useSystem,
  type SharedSystem,
} from '@postline/testing';

jest.setTimeout(60_000);

let system: SharedSystem;
let dns: DnsServer;
let events: BrokerObserver;
let receiver: WebhookReceiver;
let resend: Resend;
let stranger: Resend;
let domain: ReceivingDomain;
let signingSecret: string;

// A 1×1 PNG, and a small PDF-like attachment.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const PDF = Buffer.from('%PDF-1.4\n% a tiny document\n%%EOF\n');

const world = useSystem();

beforeAll(async () => {
  ({ system, dns } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [
      { exchange: 'events', pattern: 'internal.domain.state' },
      { exchange: 'events', pattern: 'email.received' },
    ],
  });
  resend = testResend(String((await system.admin('team', 'create', '--name', 'Receiving')).api_key), system.apiUrl);
  stranger = testResend(String((await system.admin('team', 'create', '--name', 'Stranger')).api_key), system.apiUrl);
  domain = await createReceivingDomain({
    resend,
    dns,
    events,
    name: `in${Date.now().toString(36)}.example.com`,
    mxPort: system.smtp.mx,
  });
  receiver = await startWebhookReceiver();
  const hook = dataOf(await resend.webhooks.create({ endpoint: receiver.url, events: ['email.received'] }));
  signingSecret = hook.signing_secret;
}, 90_000);

afterAll(async () => {
  await events?.close();
  await receiver?.close();
}, 30_000);

const mx = () =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port: system.smtp.mx,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    name: 'mta.sender.test',
  });

describe('a message received at the MX', () => {
  let emailId: string;
  let messageId: string;
  const subject = `Quarterly report ${Date.now()}`;

  beforeAll(async () => {
    const info = await mx().sendMail({
      envelope: { from: 'alice@sender.test', to: [`support@${domain.name}`, `sales@${domain.name}`] },
      from: 'Alice Example <alice@sender.test>',
      to: `Support <support@${domain.name}>`,
      cc: `sales@${domain.name}`,
      replyTo: 'replies@sender.test',
      subject,
      text: 'The report is attached.',
      html: '<p>The report <img src="cid:logo@sender.test" alt="logo"></p>',
      attachments: [
        { filename: 'report.pdf', content: PDF, contentType: 'application/pdf' },
        { filename: 'logo.png', content: PNG, contentType: 'image/png', cid: 'logo@sender.test' },
      ],
    });
    messageId = info.messageId;
    emailId = /queued as (\S+)/.exec(info.response)?.[1] ?? '';
  });

  it('reaches the webhook receiver as email.received with the metadata-only payload, signed', async () => {
    await receiver.waitFor('email.received', (ds) => ds.some((d) => d.json.data.email_id === emailId));
    const delivery = receiver.deliveries.find((d) => d.json.data.email_id === emailId)!;
    expect(verifyDelivery(delivery, signingSecret)).toBe(true);
    const email = dataOf(await resend.emails.receiving.get(emailId));
    // In the order of the message's parts: the inline image sits with the html, before the attachment.
    const [logo, pdf] = email.attachments;
    expect(delivery.json).toEqual({
      type: 'email.received',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        email_id: emailId,
        created_at: email.created_at,
        from: 'alice@sender.test',
        to: [`support@${domain.name}`],
        bcc: [],
        cc: [`sales@${domain.name}`],
        received_for: [`support@${domain.name}`, `sales@${domain.name}`],
        message_id: messageId,
        subject,
        attachments: [
          {
            id: logo!.id,
            filename: 'logo.png',
            content_type: 'image/png',
            content_disposition: 'inline',
            content_id: 'logo@sender.test',
          },
          {
            id: pdf!.id,
            filename: 'report.pdf',
            content_type: 'application/pdf',
            content_disposition: 'attachment',
            content_id: null,
          },
        ],
      },
    });
  });

  it('is read with the resend SDK: get with the reference shape, inline images as data: URIs by default', async () => {
    const email = dataOf(await resend.emails.receiving.get(emailId));
    expect(email).toEqual({
      object: 'email',
      id: emailId,
      to: [`support@${domain.name}`],
      from: 'alice@sender.test',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      subject,
      html: `<p>The report <img src="data:image/png;base64,${PNG.toString('base64')}" alt="logo"></p>`,
      html_format: 'data_uri',
      text: 'The report is attached.',
      headers: expect.objectContaining({
        from: 'Alice Example <alice@sender.test>',
        to: `Support <support@${domain.name}>`,
        subject,
        'mime-version': '1.0',
        'message-id': messageId,
      }),
      bcc: [],
      cc: [`sales@${domain.name}`],
      reply_to: ['replies@sender.test'],
      received_for: [`support@${domain.name}`, `sales@${domain.name}`],
      // sender.test publishes no SPF, no DMARC, and the message is not signed.
      authentication: { spf: 'unknown', dkim: 'unknown', dmarc: 'unknown' },
      message_id: messageId,
      raw: {
        download_url: expect.stringMatching(new RegExp(`^${system.apiUrl}/inbound/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`)),
        expires_at: expect.any(String),
      },
      attachments: [
        {
          id: expect.any(String),
          filename: 'logo.png',
          content_type: 'image/png',
          content_disposition: 'inline',
          content_id: 'logo@sender.test',
          size: PNG.length,
        },
        {
          id: expect.any(String),
          filename: 'report.pdf',
          content_type: 'application/pdf',
          content_disposition: 'attachment',
          content_id: null,
          size: PDF.length,
        },
      ],
    });
    expect(new Date(email.raw!.expires_at).getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
  });

  it('keeps the cid: references with html_format=cid', async () => {
    const email = dataOf(await resend.emails.receiving.get(emailId, { html_format: 'cid' })) as unknown as {
      html: string;
      html_format: string;
    };
    expect(email.html).toBe('<p>The report <img src="cid:logo@sender.test" alt="logo"></p>');
    expect(email.html_format).toBe('cid');
  });

  it('is listed with the SDK, newest first, with the reference list shape', async () => {
    const list = dataOf(await resend.emails.receiving.list());
    expect(list.object).toBe('list');
    expect(list.has_more).toBe(false);
    const item = list.data.find((e) => e.id === emailId);
    expect(item).toEqual({
      id: emailId,
      to: [`support@${domain.name}`],
      from: 'alice@sender.test',
      created_at: expect.any(String),
      subject,
      bcc: [],
      cc: [`sales@${domain.name}`],
      reply_to: ['replies@sender.test'],
      message_id: messageId,
      attachments: [
        expect.objectContaining({ filename: 'logo.png', content_id: 'logo@sender.test', size: PNG.length }),
        expect.objectContaining({ filename: 'report.pdf', content_disposition: 'attachment', size: PDF.length }),
      ],
    });
  });

  it('pages the list by id with limit/after/before', async () => {
    const second = await mx().sendMail({
      from: 'bob@sender.test',
      to: `page@${domain.name}`,
      subject: 'second',
      text: 'x',
    });
    const secondId = /queued as (\S+)/.exec(second.response)?.[1];
    const first = dataOf(await resend.emails.receiving.list({ limit: 1 }));
    expect(first).toMatchObject({ has_more: true, data: [{ id: secondId }] });
    const next = dataOf(await resend.emails.receiving.list({ limit: 1, after: secondId }));
    expect(next.data.map((e) => e.id)).toEqual([emailId]);
    const back = dataOf(await resend.emails.receiving.list({ limit: 1, before: emailId }));
    expect(back.data.map((e) => e.id)).toEqual([secondId]);
  });

  it('lists its attachments with download links that serve their bytes as downloads', async () => {
    const list = dataOf(await resend.emails.receiving.attachments.list({ emailId }));
    expect(list.data).toHaveLength(2);
    const pdf = list.data.find((a) => a.filename === 'report.pdf')!;
    expect(pdf).toEqual({
      id: expect.any(String),
      filename: 'report.pdf',
      size: PDF.length,
      content_type: 'application/pdf',
      content_disposition: 'attachment',
      content_id: null,
      download_url: expect.stringMatching(/\/inbound\//),
      expires_at: expect.any(String),
    });
    const one = dataOf(await resend.emails.receiving.attachments.get({ emailId, id: pdf.id }));
    expect(one).toMatchObject({ object: 'attachment', id: pdf.id, filename: 'report.pdf' });
    const response = await fetch(one.download_url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="report.pdf"');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(PDF);
  });

  it('serves the raw message at its download link; an edited link answers 404', async () => {
    const { raw } = dataOf(await resend.emails.receiving.get(emailId));
    const response = await fetch(raw!.download_url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('message/rfc822');
    const text = await response.text();
    expect(text).toContain(`Subject: ${subject}`);
    expect(text).toContain(`Message-ID: ${messageId}`);
    const [base, token = ''] = raw!.download_url.split('/inbound/');
    const edited = `${base}/inbound/${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
    const gone = await fetch(edited);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ statusCode: 404, name: 'not_found', message: PUBLIC_LINK_GONE });
  });

  it("answers another team's and a malformed id with 404, as the sender does", async () => {
    expect((await stranger.emails.receiving.get(emailId)).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
      message: 'Email not found',
    });
    expect((await stranger.emails.receiving.attachments.list({ emailId })).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
    expect(dataOf(await stranger.emails.receiving.list()).data).toEqual([]);
    const malformed = (await resend.emails.receiving.get('not-an-id')).error;
    expect(malformed).toEqual((await resend.emails.get('not-an-id')).error);
    expect((await resend.emails.receiving.get(emailId, { html_format: 'inline' as 'cid' })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
  });
});

describe('domains that do not receive', () => {
  it('refuses RCPT for a domain whose receiving MX record is not verified, with 550 5.7.1 (relaying denied) and the reason', async () => {
    const name = `pending${Date.now().toString(36)}.example.com`;
    const created = dataOf(await resend.domains.create({ name, capabilities: { receiving: 'enabled' } }));
    await events.waitFor(
      'the pending domain state',
      (m) => m.routingKey === 'internal.domain.state' && m.envelope.data.domain_id === created.id,
    );
    expect(await rcptReply(system.smtp.mx, `hello@${name}`)).toEqual({
      code: 550,
      text: `5.7.1 <hello@${name}>: inbound.postline.test does not accept mail for ${name} (receiving is not enabled and verified for this domain)`,
    });
    expect(await rcptReply(system.smtp.mx, 'hello@unknown.example.org')).toEqual({
      code: 550,
      text: '5.7.1 <hello@unknown.example.org>: inbound.postline.test does not accept mail for unknown.example.org',
    });
  });
});
