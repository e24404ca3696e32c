// The SMTP relay end to end: nodemailer as the client of the real inbound-smtp process (STARTTLS and
// implicit TLS, its self-signed certificate), which checks AUTH and submits through the real gateway to the
// real sender, which DKIM-signs and delivers to the recipients' MX (a local smtp-server sink, found through a
// local DNS server); the official resend SDK reads the email back and a webhook receiver gets its events.
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import nodemailer from 'nodemailer';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  nextSecond,
  observeBroker,
  startWebhookReceiver,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type SinkMx,
  type WebhookReceiver,
  testResend,
  useSystem,
  type SharedSystem,
  uniqueDomain,
} from '@postline/testing';

jest.setTimeout(60_000);

const RCPT = uniqueDomain('rcpt');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let receiver: WebhookReceiver;
let resend: Resend;
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
  apiKey = String((await system.admin('team', 'create', '--name', 'Relay')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns, events, name: `${unique('relay')}.example.com` })).name;
  receiver = await startWebhookReceiver();
  dataOf(await resend.webhooks.create({ endpoint: receiver.url, events: ['email.sent', 'email.delivered'] }));
}, 120_000);

afterAll(async () => {
  await events?.close();
  await receiver?.close();
}, 30_000);

let counter = 0;
function unique(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${counter++}`;
}

type Port = 'relay' | 'relayTls';
type Login = { port?: Port; user?: string; pass?: string; method?: 'PLAIN' | 'LOGIN' };

/** A nodemailer transport to the relay: STARTTLS required on `relay`, implicit TLS on `relayTls`. */
function relay({ port = 'relay', user = 'postline', pass = apiKey, method = 'PLAIN' }: Login = {}) {
  const secure = port === 'relayTls';
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: system.smtp[port],
    secure,
    requireTLS: !secure,
    tls: { rejectUnauthorized: false },
    auth: { user, pass },
    authMethod: method,
  });
}

/** The email id in a `250 2.0.0 Ok: queued as <id>` reply. */
function queuedId(response: string): string {
  expect(response).toMatch(new RegExp(`^250 2\\.0\\.0 Ok: queued as ${UUID.source}$`));
  return UUID.exec(response)?.[0] as string;
}

/** What nodemailer rejects with: the server's reply. */
type SmtpError = { responseCode?: number; response?: string; command?: string };

async function refusal(promise: Promise<unknown>): Promise<SmtpError> {
  try {
    await promise;
  } catch (err) {
    return err as SmtpError;
  }
  throw new Error('expected the relay to refuse');
}

/**
 * A raw SMTP conversation with the relay: the greeting, then one reply per command (a multi-line reply
 * joined). `STARTTLS` answered 220 upgrades the connection in place.
 */
async function dialog(port: Port, commands: string[]): Promise<string[]> {
  const implicit = port === 'relayTls';
  const options = { host: '127.0.0.1', port: system.smtp[port] };
  let socket: net.Socket = implicit ? tls.connect({ ...options, rejectUnauthorized: false }) : net.connect(options);
  let buffer = '';
  const replies: string[] = [];
  let wake: (() => void) | undefined;
  const onData = (data: Buffer) => {
    buffer += data.toString('latin1');
    for (let match; (match = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/.exec(buffer)); ) {
      buffer = buffer.slice(match[0].length);
      replies.push(match[0].trimEnd());
    }
    wake?.();
  };
  socket.on('data', onData);
  socket.on('error', () => undefined);
  const reply = async () => {
    await waitFor('an SMTP reply', () => replies.length > 0, 10_000);
    return replies.shift() as string;
  };
  const answers = [await reply()];
  try {
    for (const command of commands) {
      socket.write(`${command}\r\n`);
      const answer = await reply();
      answers.push(answer);
      if (command === 'STARTTLS' && answer.startsWith('220')) {
        socket.off('data', onData);
        socket = tls.connect({ socket, rejectUnauthorized: false });
        socket.on('data', onData);
        socket.on('error', () => undefined);
        await new Promise((resolve) => socket.once('secureConnect', resolve));
      }
    }
  } finally {
    socket.destroy();
  }
  return answers;
}

const plain = (user: string, pass: string) => Buffer.from(`\0${user}\0${pass}`).toString('base64');

/** The sum of the inbound-smtp's samples of `name` whose labels include `labels`. */
async function inboundMetric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${system.services['inbound-smtp'].url}/metrics`)).text();
  let sum = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) {
    const labelText = match[1] ?? '';
    if (Object.entries(labels).every(([key, value]) => labelText.includes(`${key}="${value}"`)))
      sum += Number(match[2]);
  }
  return sum;
}

describe('a message through the relay', () => {
  let id: string;
  const to = `ok-relay-${Date.now().toString(36)}@${RCPT}`;
  const bcc = `hidden-${Date.now().toString(36)}@${RCPT}`;

  beforeAll(async () => {
    // Composed by nodemailer's stream transport, which keeps the Bcc header (its SMTP transport leaves it
    // out), as some mail clients do: the relay's sender must remove it.
    const composed = await nodemailer.createTransport({ streamTransport: true, buffer: true }).sendMail({
      from: `Acme <hello@${domain}>`,
      to,
      bcc,
      subject: 'Welcome aboard',
      text: 'Hello from the relay',
      html: '<p>Hello from <b>the relay</b></p>',
      headers: {
        'X-Entity-Ref-ID': 'ref-42',
        'List-Unsubscribe': `<mailto:unsubscribe@${domain}>`,
        'X-Postline-Tags': 'kind=welcome, plan=pro',
      },
    });
    const raw = composed.message as Buffer;
    expect(raw.toString()).toMatch(/^Bcc: /m);
    const info = await relay().sendMail({ envelope: { from: `hello@${domain}`, to: [to, bcc] }, raw });
    id = queuedId(info.response);
  });

  it("reaches the recipients' MX as composed, Bcc delivered but not shown, relay-only headers removed, DKIM passing", async () => {
    await waitFor(
      'both recipients at the sink',
      () => [to, bcc].every((rcpt) => sink.messages.some((m) => m.to.includes(rcpt))),
      30_000,
    );
    for (const rcpt of [to, bcc]) {
      const message = sink.messages.find((m) => m.to.includes(rcpt));
      const raw = message?.raw.toString('utf8') ?? '';
      expect(message?.from).toMatch(new RegExp(`@send\\.${domain.replaceAll('.', '\\.')}$`));
      expect(raw).toMatch(/^X-Entity-Ref-ID: ref-42\r$/m);
      expect(raw).toContain(`List-Unsubscribe: <mailto:unsubscribe@${domain}>`);
      expect(raw).toMatch(/^Subject: Welcome aboard\r$/m);
      expect(raw).not.toMatch(/^Bcc:/im);
      expect(raw).not.toMatch(/^X-Postline-Tags:/im);
      expect(raw).not.toContain(bcc.split('@')[0]);

      // mailauth asks the local DNS server for the DKIM key the customer published there.
      const resolver = new Resolver();
      resolver.setServers([dns.address]);
      const result = await dkimVerify(message?.raw as Buffer, {
        resolver: (name: string, type: string) => resolver.resolve(name, type as 'TXT'),
      });
      expect(result.results[0]?.status.result).toBe('pass');
      expect(result.results[0]?.signingDomain).toBe(domain);
    }
  });

  it('is an email like any other: readable with the resend SDK, with its tags, and its webhooks sent', async () => {
    const email = dataOf(await resend.emails.get(id));
    expect(email).toMatchObject({
      object: 'email',
      id,
      from: `Acme <hello@${domain}>`,
      to: [to],
      subject: 'Welcome aboard',
    });
    expect((email as unknown as { tags?: unknown }).tags).toEqual(
      expect.arrayContaining([
        { name: 'kind', value: 'welcome' },
        { name: 'plan', value: 'pro' },
      ]),
    );
    await receiver.waitFor('email.sent and email.delivered', (all) =>
      ['email.sent', 'email.delivered'].every((type) =>
        all.some((d) => d.json.type === type && d.json.data.email_id === id),
      ),
    );
  });
});

describe('AUTH', () => {
  it.each([
    ['relay', 'PLAIN', 'postline'],
    ['relay', 'LOGIN', 'resend'],
    ['relayTls', 'PLAIN', 'resend'],
    ['relayTls', 'LOGIN', 'PostLine'],
  ] as const)('takes a message on %s with AUTH %s as %s', async (port, method, user) => {
    const info = await relay({ port, method, user }).sendMail({
      from: `hello@${domain}`,
      to: 'delivered@postline.test',
      subject: `${port} ${method}`,
      text: 'hi',
    });
    const id = queuedId(info.response);
    expect(dataOf(await resend.emails.get(id))).toMatchObject({
      id,
      to: ['delivered@postline.test'],
      subject: `${port} ${method}`,
    });
  });

  it('takes a sending_access key', async () => {
    const key = dataOf(await resend.apiKeys.create({ name: unique('relay-sending'), permission: 'sending_access' }));
    const info = await relay({ pass: key.token, port: 'relayTls' }).sendMail({
      from: `hello@${domain}`,
      to: 'delivered@postline.test',
      subject: 'sending',
      text: 'hi',
    });
    queuedId(info.response);
  });

  it('refuses AUTH before STARTTLS with 538', async () => {
    const replies = await dialog('relay', ['EHLO client.test', `AUTH PLAIN ${plain('postline', apiKey)}`]);
    expect(replies[2]).toMatch(/^538 /);
  });

  it('refuses a bad key, another username and a revoked key with 535 5.7.8', async () => {
    const failuresBefore = await inboundMetric('inbound_smtp_auth_failures_total');
    const bad = await refusal(relay({ pass: 'pl_not_a_real_key' }).verify());
    expect(bad.response).toBe('535 5.7.8 Authentication credentials invalid');
    expect((await refusal(relay({ user: 'admin' }).verify())).responseCode).toBe(535);

    const key = dataOf(await resend.apiKeys.create({ name: unique('relay-revoked') }));
    await expect(relay({ pass: key.token }).verify()).resolves.toBe(true);
    dataOf(await resend.apiKeys.remove(key.id));
    await waitFor(
      'the revoked key to be refused',
      async () =>
        (await refusal(relay({ pass: key.token }).verify()).catch((): SmtpError => ({}))).responseCode === 535,
    );
    expect(await inboundMetric('inbound_smtp_auth_failures_total')).toBeGreaterThanOrEqual(failuresBefore + 3);
  });

  it('refuses the key of a disabled team with 535, also at DATA in a session authenticated before', async () => {
    const team = await system.admin('team', 'create', '--name', unique('Disabled'));
    const key = String(team.api_key);
    const own = (
      await createVerifiedDomain({
        resend: testResend(key, system.apiUrl),
        dns,
        events,
        name: `${unique('disabled')}.example.com`,
      })
    ).name;
    // One kept connection: the second message goes through the session authenticated for the first.
    const pooled = nodemailer.createTransport({
      pool: true,
      maxConnections: 1,
      host: '127.0.0.1',
      port: system.smtp.relayTls,
      secure: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'postline', pass: key },
    });
    try {
      const message = { from: `hi@${own}`, to: 'delivered@postline.test', subject: 'before', text: 'x' };
      queuedId((await pooled.sendMail(message)).response);
      await system.admin('team', 'disable', '--team', String(team.team_id));
      await waitFor(
        'the disabled team to be refused at AUTH',
        async () => (await refusal(relay({ pass: key }).verify()).catch((): SmtpError => ({}))).responseCode === 535,
      );
      const refused = await refusal(pooled.sendMail({ ...message, subject: 'after' }));
      expect(refused).toMatchObject({ responseCode: 535, command: 'DATA' });
    } finally {
      pooled.close();
    }
  });

  it('refuses MAIL and RCPT to any domain without AUTH on both ports (530): never an open relay', async () => {
    for (const port of ['relay', 'relayTls'] as const) {
      const upgrade = port === 'relay' ? ['EHLO client.test', 'STARTTLS'] : [];
      const replies = await dialog(port, [
        ...upgrade,
        'EHLO client.test',
        'MAIL FROM:<someone@example.org>',
        'RCPT TO:<victim@example.net>',
        `RCPT TO:<someone@${domain}>`,
        'DATA',
      ]);
      const refused = replies.slice(-4);
      for (const reply of refused)
        expect([port, reply]).toEqual([port, expect.stringMatching(/^530 5\.7\.0 Authentication required/)]);
    }
    const noAuth = nodemailer.createTransport({
      host: '127.0.0.1',
      port: system.smtp.relay,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
    });
    const refused = await refusal(
      noAuth.sendMail({ from: `hello@${domain}`, to: 'anyone@example.net', subject: 'x', text: 'x' }),
    );
    expect(refused).toMatchObject({ responseCode: 530, command: 'MAIL FROM' });
  });
});

describe('what the gateway decides', () => {
  it('refuses a From domain that is not verified with 550 5.7.1 and the reason', async () => {
    const refused = await refusal(
      relay().sendMail({
        from: 'hello@unverified.example.org',
        to: 'delivered@postline.test',
        subject: 'x',
        text: 'x',
      }),
    );
    expect(refused.responseCode).toBe(550);
    expect(refused.response).toMatch(/^550 5\.7\.1 .*unverified\.example\.org/);
  });

  it('gives one email for a Resend-Idempotency-Key sent twice (the same id in both 250s)', async () => {
    const key = unique('order-');
    const raw = [
      `From: Acme <hello@${domain}>`,
      'To: delivered@postline.test',
      'Subject: Your order',
      `Resend-Idempotency-Key: ${key}`,
      `Message-ID: <${key}@${domain}>`,
      'Date: Wed, 25 Nov 2026 10:00:00 +0000',
      '',
      'Thanks for your order.',
      '',
    ].join('\r\n');
    const send = async () =>
      (await relay().sendMail({ envelope: { from: `hello@${domain}`, to: ['delivered@postline.test'] }, raw }))
        .response;
    const first = queuedId(await send());
    const second = queuedId(await send());
    expect(second).toBe(first);
    const listed = dataOf(await resend.emails.list({ limit: 100 }));
    expect(listed.data.filter((e) => e.subject === 'Your order' && e.id === first)).toHaveLength(1);
  });

  it("answers 421 4.7.0 past the team's rate limit", async () => {
    const team = await system.admin('team', 'create', '--name', unique('Limited'));
    const key = String(team.api_key);
    const limited = testResend(key, system.apiUrl);
    const own = (await createVerifiedDomain({ resend: limited, dns, events, name: `${unique('limited')}.example.com` }))
      .name;
    await system.admin('team', 'set-rate-limit', '--team', String(team.team_id), '--per-second', '1');
    await waitFor('the limit of 1/s to apply', async () => {
      await nextSecond();
      const burst = await Promise.all(
        [0, 1].map(() =>
          limited.emails.send({ from: `hi@${own}`, to: 'delivered@postline.test', subject: 'probe', text: 'x' }),
        ),
      );
      return burst.some((r) => r.error?.name === 'rate_limit_exceeded');
    });
    await nextSecond();
    const outcomes = await Promise.allSettled(
      [0, 1, 2].map((n) =>
        relay({ pass: key }).sendMail({
          from: `hi@${own}`,
          to: 'delivered@postline.test',
          subject: `burst ${n}`,
          text: 'x',
        }),
      ),
    );
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as SmtpError] : []));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const err of refused) expect(err.response).toMatch(/^421 4\.7\.0 /);
    expect(outcomes.some((o) => o.status === 'fulfilled')).toBe(true);
  });

  it('counts relay messages by outcome and open sessions', async () => {
    for (const outcome of ['accepted', 'rejected', 'deferred']) {
      expect([
        outcome,
        (await inboundMetric('inbound_smtp_messages_total', { listener: 'relay', outcome })) > 0,
      ]).toEqual([outcome, true]);
    }
    // The sessions gauge is back to what is open now: every client above has left.
    await waitFor(
      'no relay session open',
      async () => (await inboundMetric('inbound_smtp_sessions', { listener: 'relay' })) === 0,
    );
  });
});
