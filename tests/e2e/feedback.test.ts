// The feedback loop end to end (DSN bounces, RFC 3464; ARF complaints, RFC 5965): emails sent with the resend SDK reach
// a sink MX as the recipients' server; that server's later reports come back to the system's own MX as a remote MTA
// sends them, with nodemailer: a DSN (null reverse-path) to the VERP address its MAIL FROM was, and an ARF complaint to
// the return path's abuse mailbox naming that VERP address inside. The customer's webhook receiver gets email.bounced /
// email.complained, and the suppression list has the address; a forged VERP tag changes nothing; a message sent through
// the SMTP relay ends the same way. A broadcast's List-Unsubscribe mailto, mailed back, unsubscribes the contact.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import nodemailer from 'nodemailer';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  observeBroker,
  startWebhookReceiver,
  verifyDelivery,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type SinkMessage,
  type SinkMx,
  type WebhookReceiver,
  testResend,
  useSystem,
  type SharedSystem,
} from '@postline/testing';

jest.setTimeout(90_000);

const RCPT = 'rcpt.test';
const DOMAIN = 'feedback.example.com';
const RETURN_PATH = `send.${DOMAIN}`;

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let receiver: WebhookReceiver;
let signingSecret: string;
let apiKey: string;
let resend: Resend;

const world = useSystem({ rcptDomain: RCPT });

beforeAll(async () => {
  ({ dns, sink, system } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [
      { exchange: 'events', pattern: 'internal.domain.state' },
      { exchange: 'events', pattern: 'email.*' },
    ],
  });
  const team = await system.admin('team', 'create', '--name', 'Feedback');
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  await createVerifiedDomain({ resend, dns, events, name: DOMAIN });
  receiver = await startWebhookReceiver();
  const hook = dataOf(
    await resend.webhooks.create({ endpoint: receiver.url, events: ['email.bounced', 'email.complained'] }),
  );
  signingSecret = hook.signing_secret;
}, 120_000);

afterAll(async () => {
  await events?.close();
  await receiver?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

/** Sends one message through the SMTP relay as a mail client would (STARTTLS, AUTH with the API key); its id. */
async function relayOne(to: string, subject: string): Promise<string> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: system.smtp.relay,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'postline', pass: apiKey },
  });
  try {
    const info = await transport.sendMail({
      from: `Acme <news@${DOMAIN}>`,
      to,
      subject,
      text: 'Thanks for your order.',
    });
    const id = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.exec(info.response)?.[0];
    if (!id) throw new Error(`no email id in the relay's answer: ${info.response}`);
    return id;
  } finally {
    transport.close();
  }
}

/**
 * Sends one email to `to` (with the SDK, or through the SMTP relay) and returns its id and the message the
 * sink MX got (its MAIL FROM is the VERP address).
 */
async function sendOne(
  to: string,
  subject = 'Your receipt',
  via: 'api' | 'relay' = 'api',
): Promise<{ id: string; message: SinkMessage }> {
  const id =
    via === 'relay'
      ? await relayOne(to, subject)
      : dataOf(await resend.emails.send({ from: `Acme <news@${DOMAIN}>`, to, subject, text: 'Thanks for your order.' }))
          .id;
  await events.waitFor(
    `email.delivered ${id}`,
    (m) => m.routingKey === 'email.delivered' && m.envelope.data.email_id === id,
    { timeoutMs: 30_000 },
  );
  const message = sink.messages.find((m) => m.to.includes(to));
  if (!message) throw new Error(`no message to ${to} at the sink`);
  return { id, message };
}

/**
 * Sends a message to the system's MX as a remote MTA would (STARTTLS with the MX's self-signed certificate).
 * The return path becomes known to the MX shortly after the domain is verified, so a refused RCPT (nothing
 * accepted) is tried again.
 */
async function sendToMx(envelope: { from: string; to: string }, raw: string): Promise<void> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: system.smtp.mx,
    secure: false,
    tls: { rejectUnauthorized: false },
    name: 'mx1.rcpt.test',
  });
  try {
    await waitFor(`the MX to take mail for ${envelope.to}`, async () => {
      try {
        await transport.sendMail({ envelope: { from: envelope.from, to: [envelope.to] }, raw });
        return true;
      } catch (err) {
        if ((err as { responseCode?: number }).responseCode === 550) return false;
        throw err;
      }
    });
  } finally {
    transport.close();
  }
}

function crlf(lines: string[]): string {
  return `${lines.join('\r\n')}\r\n`;
}

/** A Postfix-style DSN for one failed recipient, quoting the original's headers. */
function dsn(verp: string, recipient: string, status: string, diagnostic: string): string {
  return crlf([
    'From: MAILER-DAEMON@mx1.rcpt.test (Mail Delivery System)',
    `To: ${verp}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-boundary"',
    '',
    '--dsn-boundary',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    `<${recipient}>: host mx1.rcpt.test said: ${diagnostic}`,
    '',
    '--dsn-boundary',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx1.rcpt.test',
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    `Original-Recipient: rfc822;${recipient}`,
    'Action: failed',
    `Status: ${status}`,
    `Diagnostic-Code: smtp; ${diagnostic}`,
    '',
    '--dsn-boundary',
    'Content-Type: text/rfc822-headers',
    '',
    `Return-Path: <${verp}>`,
    `To: ${recipient}`,
    'Subject: Your receipt',
    '',
    '--dsn-boundary--',
  ]);
}

/** An ARF abuse report (RFC 5965) as a mailbox provider's feedback loop sends it. */
function arf(verp: string, recipient: string): string {
  return crlf([
    'From: Feedback Loop <fbl@mail.rcpt.test>',
    `To: abuse@${RETURN_PATH}`,
    'Subject: FW: Your receipt',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="arf-boundary"',
    '',
    '--arf-boundary',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is an email abuse report for an email message received from IP 127.0.0.1.',
    '',
    '--arf-boundary',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: RcptFBL/1.0',
    'Version: 1',
    `Original-Mail-From: <${verp}>`,
    `Original-Rcpt-To: <${recipient}>`,
    `Reported-Domain: ${DOMAIN}`,
    '',
    '--arf-boundary',
    'Content-Type: message/rfc822',
    '',
    `Return-Path: <${verp}>`,
    `From: Acme <news@${DOMAIN}>`,
    'To: redacted',
    'Subject: Your receipt',
    '',
    'Thanks for your order.',
    '',
    '--arf-boundary--',
  ]);
}

async function suppression(email: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${system.apiUrl}/suppressions/${encodeURIComponent(email)}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

async function returnPathMail(outcome: string): Promise<number> {
  const text = await (await fetch(`${system.services['inbound-smtp'].url}/metrics`)).text();
  // Other labels (the service's own) may stand beside the outcome.
  const match = new RegExp(`^inbound_return_path_mail_total\\{[^}]*outcome="${outcome}"[^}]*\\} (\\d+)`, 'm').exec(
    text,
  );
  return Number(match?.[1] ?? 0);
}

function deliveriesOf(type: string, emailId: string) {
  const found = receiver.deliveries.filter((d) => d.json.type === type && d.json.data.email_id === emailId);
  for (const delivery of found) expect(verifyDelivery(delivery, signingSecret)).toBe(true);
  return found;
}

describe('bounces and complaints mailed back to the return path', () => {
  it('a DSN to the VERP address bounces the recipient and suppresses the address', async () => {
    const to = `${unique('gone')}@${RCPT}`;
    const { id, message } = await sendOne(to);
    expect(message.from).toMatch(
      new RegExp(`^b\\.[0-9a-f]{32}\\.0\\.[a-z2-7]{10}@${RETURN_PATH.replaceAll('.', '\\.')}$`),
    );

    await sendToMx(
      { from: '', to: message.from },
      dsn(message.from, to, '5.1.1', `550 5.1.1 <${to}>: Recipient address rejected: User unknown`),
    );
    await receiver.waitFor('email.bounced', () => deliveriesOf('email.bounced', id).length === 1, 30_000);
    const [bounced] = deliveriesOf('email.bounced', id);
    expect(bounced?.json.data).toMatchObject({
      email_id: id,
      to: [to],
      bounce: {
        type: 'Permanent',
        subType: 'General',
        diagnosticCode: [`smtp; 550 5.1.1 <${to}>: Recipient address rejected: User unknown`],
      },
    });
    await waitFor('the address suppressed', async () => (await suppression(to)).status === 200);
    expect((await suppression(to)).body).toMatchObject({ email: to, origin: 'bounce', source_id: id });
    expect((await resend.emails.get(id)).data?.last_event).toBe('bounced');
  });

  it('an ARF abuse report to the abuse mailbox makes a complaint and suppresses the address', async () => {
    const to = `${unique('angry')}@${RCPT}`;
    const { id, message } = await sendOne(to);

    await sendToMx({ from: 'fbl-bounces@mail.rcpt.test', to: `abuse@${RETURN_PATH}` }, arf(message.from, to));
    await receiver.waitFor('email.complained', () => deliveriesOf('email.complained', id).length === 1, 30_000);
    expect(deliveriesOf('email.complained', id)[0]?.json.data).toMatchObject({ email_id: id, to: [to] });
    await waitFor('the address suppressed', async () => (await suppression(to)).status === 200);
    expect((await suppression(to)).body).toMatchObject({ email: to, origin: 'complaint', source_id: id });
  });

  it('a DSN to a VERP address with a forged tag is taken, counted and changes nothing', async () => {
    const to = `${unique('victim')}@${RCPT}`;
    const { id, message } = await sendOne(to);
    const [local = '', host = ''] = message.from.split('@');
    const tag = local.slice(-10);
    const forged = `${local.slice(0, -10)}${tag.startsWith('a') ? 'b' : 'a'}${tag.slice(1)}@${host}`;
    const before = await returnPathMail('forged');

    await sendToMx({ from: '', to: forged }, dsn(forged, to, '5.1.1', `550 5.1.1 <${to}>: User unknown`));
    await waitFor('the forged report counted', async () => (await returnPathMail('forged')) === before + 1);
    // A genuine report sent after it is handled; by then the forged one would have been too.
    const marker = `${unique('marker')}@${RCPT}`;
    const sent = await sendOne(marker);
    await sendToMx(
      { from: '', to: sent.message.from },
      dsn(sent.message.from, marker, '5.1.1', '550 5.1.1 User unknown'),
    );
    await receiver.waitFor('the marker bounced', () => deliveriesOf('email.bounced', sent.id).length === 1, 30_000);
    expect(deliveriesOf('email.bounced', id)).toEqual([]);
    expect((await suppression(to)).status).toBe(404);
    expect((await resend.emails.get(id)).data?.last_event).toBe('delivered');
  });
});

describe('a message sent through the SMTP relay, bounced and complained about later', () => {
  it('bounces and is suppressed on a DSN to its VERP address', async () => {
    const to = `${unique('relayed-gone')}@${RCPT}`;
    const { id, message } = await sendOne(to, 'Relayed receipt', 'relay');
    await sendToMx({ from: '', to: message.from }, dsn(message.from, to, '5.1.1', `550 5.1.1 <${to}>: User unknown`));
    await receiver.waitFor('email.bounced', () => deliveriesOf('email.bounced', id).length === 1, 30_000);
    await waitFor('the address suppressed', async () => (await suppression(to)).status === 200);
    expect((await suppression(to)).body).toMatchObject({ email: to, origin: 'bounce', source_id: id });
  });

  it('is complained about and suppressed on an ARF report to the abuse mailbox', async () => {
    const to = `${unique('relayed-angry')}@${RCPT}`;
    const { id, message } = await sendOne(to, 'Relayed receipt', 'relay');
    await sendToMx({ from: 'fbl-bounces@mail.rcpt.test', to: `abuse@${RETURN_PATH}` }, arf(message.from, to));
    await receiver.waitFor('email.complained', () => deliveriesOf('email.complained', id).length === 1, 30_000);
    await waitFor('the address suppressed', async () => (await suppression(to)).status === 200);
    expect((await suppression(to)).body).toMatchObject({ email: to, origin: 'complaint', source_id: id });
  });
});

describe("a broadcast's List-Unsubscribe mailto", () => {
  it('mailed back as a mail client does, unsubscribes the contact', async () => {
    const email = `${unique('reader')}@${RCPT}`;
    const segment = dataOf(await resend.segments.create({ name: unique('news') })).id;
    const contact = dataOf(await resend.contacts.create({ email, segments: [{ id: segment }] })).id;
    dataOf(
      await resend.broadcasts.create({
        segmentId: segment,
        from: `Acme <news@${DOMAIN}>`,
        subject: 'News',
        html: '<p>News. <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
        send: true,
      }),
    );
    await waitFor('the broadcast at the sink', () => sink.messages.some((m) => m.to.includes(email)), 30_000);
    const message = sink.messages.find((m) => m.to.includes(email));
    const head = (message?.raw.toString('utf8').split('\r\n\r\n')[0] ?? '').replace(/\r\n[ \t]+/g, ' ');
    const mailto = /^List-Unsubscribe:.*<mailto:([^?>]+)\?subject=([^>]+)>/im.exec(head);
    expect(mailto?.[1]).toBe(`unsubscribe@${RETURN_PATH}`);
    const subject = decodeURIComponent(mailto?.[2] ?? '');
    expect(subject).toMatch(/^unsubscribe \S+$/);

    await sendToMx(
      { from: email, to: `unsubscribe@${RETURN_PATH}` },
      crlf([
        `From: <${email}>`,
        `To: <unsubscribe@${RETURN_PATH}>`,
        `Subject: ${subject}`,
        'MIME-Version: 1.0',
        '',
        'Sent from a List-Unsubscribe link.',
      ]),
    );
    await waitFor(
      'the contact unsubscribed',
      async () => dataOf(await resend.contacts.get({ id: contact })).unsubscribed,
      30_000,
    );
  });
});
