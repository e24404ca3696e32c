// The email that tells a team's admins that a webhook endpoint stopped working, end to end: the whole system
// as real processes, delivering to a local sink MX through a local DNS server. The operator's team has
// verified its own domain, and the gateway sends the dashboard's emails as that team (DASHBOARD_MAIL_FROM,
// DASHBOARD_MAIL_TEAM_ID). A customer's endpoint fails every delivery until its failures disable it
// (POSTLINE_DELAY_SCALE shrinks the 5-day window to ~8.6 s); each admin of the team gets one notice through
// Postline itself, a member none, and the message delivered again adds none.
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals';
import amqp from 'amqplib';
import { sql } from 'kysely';
import { createDb } from '@postline/platform';
import {
  createVerifiedDomain,
  mimePartOf,
  observeBroker,
  startDeliveringSystem,
  startWebhookReceiver,
  testResend,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type SinkMx,
  type System,
  type WebhookReceiver,
} from '@postline/testing';

jest.setTimeout(240_000);

const rcptDomain = `people-${Date.now()}.test`;
const opsDomain = `ops-${Date.now()}.example.com`;
let system: System;
let dns: DnsServer;
let sink: SinkMx;
let receiver: WebhookReceiver;
let notices: BrokerObserver;
let operatorKey: string;

beforeAll(async () => {
  // The test polls the endpoint's state as it waits: above the default 10 requests a second.
  ({ system, dns, sink } = await startDeliveringSystem(rcptDomain, {
    POSTLINE_DELAY_SCALE: '0.00002',
    RATE_LIMIT_PER_SECOND: '1000',
  }));
  // The operator's team and its verified domain, then the gateway started again to send as it.
  const operator = await system.admin('team', 'create', '--name', 'Operator');
  operatorKey = String(operator.api_key);
  const resend = testResend(operatorKey, system.apiUrl);
  await createVerifiedDomain({ resend, dns, env: system.env, name: opsDomain });
  system.env.DASHBOARD_MAIL_FROM = `Postline <alerts@${opsDomain}>`;
  system.env.DASHBOARD_MAIL_TEAM_ID = String(operator.team_id);
  await system.terminate('api-gateway');
  await system.restart('api-gateway');
  // Its queue declared (the gateway's readiness does not wait for RabbitMQ): an event published before would
  // have had no subscriber.
  const connection = await amqp.connect(String(system.env.AMQP_URL));
  try {
    const queue = `${String(system.env.BROKER_PREFIX)}.api-gateway.admin-notices`;
    await waitFor(
      'the gateway consuming internal.webhook.disabled',
      async () => {
        // A missing queue closes the channel: a new one each time.
        const channel = await connection.createChannel();
        channel.on('error', () => undefined);
        try {
          return (await channel.checkQueue(queue)).consumerCount > 0;
        } catch {
          return false;
        } finally {
          await channel.close().catch(() => undefined);
        }
      },
      30_000,
    );
  } finally {
    await connection.close();
  }
  receiver = await startWebhookReceiver();
  receiver.reply(() => ({ status: 503, body: 'down' }));
  notices = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.webhook.disabled' }],
  });
}, 180_000);

afterAll(async () => {
  await notices?.close();
  await receiver?.close();
  await system?.stop();
  await Promise.all([sink?.close(), dns?.close()]);
}, 60_000);

/**
 * The sink's messages to `address`: their headers and their text (a single text/plain part here), its
 * quoted-printable undone.
 */
const mailTo = (address: string) =>
  sink.messages
    .filter((m) => m.to.includes(address))
    .map((m) => {
      const raw = m.raw.toString('latin1');
      const split = raw.indexOf('\r\n\r\n');
      const head = raw.slice(0, split);
      const body = raw.slice(split + 4);
      const text = /^Content-Transfer-Encoding: *quoted-printable/im.test(head)
        ? Buffer.from(
            body
              .replace(/=\r?\n/g, '')
              .replace(/=([0-9A-F]{2})/g, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          ).toString('utf8')
        : (mimePartOf(m.raw, 'text/plain') ?? body);
      return { head, text };
    });

it('emails each admin of the team once when an endpoint is disabled by its failures, and no member', async () => {
  const team = await system.admin('team', 'create', '--name', 'Acme');
  const teamId = String(team.team_id);
  const key = String(team.api_key);
  const people = {
    ada: `ada@${rcptDomain}`,
    grace: `grace@${rcptDomain}`,
    linus: `linus@${rcptDomain}`,
  };
  await system.admin('user', 'create', '--team', teamId, '--email', people.ada, '--name', 'Ada', '--role', 'admin');
  await system.admin('user', 'create', '--team', teamId, '--email', people.grace, '--name', 'Grace', '--role', 'admin');
  await system.admin(
    'user',
    'create',
    '--team',
    teamId,
    '--email',
    people.linus,
    '--name',
    'Linus',
    '--role',
    'member',
  );

  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${system.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, unknown>;
  };
  const hook = await call('POST', '/webhooks', { endpoint: receiver.url, events: ['email.sent'] });
  const hookId = String(hook.id);
  // Test events, one after another through their whole (scaled, ~2 s) retry schedule, until the endpoint's
  // failures have lasted the (scaled) 5 days.
  for (let n = 1; (await call('GET', `/webhooks/${hookId}`)).status === 'enabled'; n++) {
    expect(n).toBeLessThan(30);
    let sent: Record<string, unknown>;
    try {
      sent = await call('POST', `/webhooks/${hookId}/test`, { type: 'email.sent' });
    } catch (err) {
      // Disabled between the check and this send: the last event's retries took its failures past the limit.
      if ((await call('GET', `/webhooks/${hookId}`)).status === 'disabled') break;
      throw err;
    }
    const id = String(sent.id);
    await waitFor(
      'its eight attempts, or the endpoint disabled',
      async () =>
        receiver.deliveries.filter((d) => d.headers['webhook-id'] === id).length === 8 ||
        (await call('GET', `/webhooks/${hookId}`)).status === 'disabled',
      30_000,
    );
  }

  await waitFor(
    'a notice to each admin',
    () => mailTo(people.ada).length === 1 && mailTo(people.grace).length === 1,
    60_000,
  ).catch(async (err: unknown) => {
    // Which step did not happen: the notices written, the emails accepted, what the services said.
    const { db } = createDb<Record<string, never>>({ url: String(system.env.DATABASE_URL), schema: 'gateway', max: 1 });
    const rows = await sql`select to_address, attempts, sent_at from notice_emails`
      .execute(db)
      .catch((e: unknown) => e);
    await db.destroy();
    const emails = await (
      await fetch(`${system.apiUrl}/emails`, { headers: { authorization: `Bearer ${operatorKey}` } })
    ).text();
    const said = (['api-gateway', 'sender'] as const).map((name) => system.services[name].output.join('').slice(-3000));
    throw new Error(`${String(err)}\n${JSON.stringify(rows)}\n${emails.slice(0, 2000)}\n${said.join('\n')}`);
  });
  const mail = mailTo(people.ada)[0]!;
  expect(mail.head).toMatch(new RegExp(`^From: Postline <alerts@${opsDomain.replaceAll('.', '\\.')}>`, 'm'));
  expect(mail.head).toMatch(/^Subject: Webhook endpoint disabled: http:\/\/127\.0\.0\.1/m);
  expect(mail.text).toContain('Hello Ada,');
  expect(mail.text).toContain('every delivery failed for 5 days');
  expect(mail.text).toContain(`/dashboard/webhooks/${hookId}`);

  // The same message delivered again adds nothing. A second one after it (for another endpoint) is handled
  // after it, so once its notices are in, the copy's would be too.
  const original = await notices.waitFor('the endpoint-disabled event', (m) => m.envelope.data.webhook_id === hookId);
  const connection = await amqp.connect(String(system.env.AMQP_URL));
  try {
    const channel = await connection.createConfirmChannel();
    const exchange = `${String(system.env.BROKER_PREFIX)}.events`;
    const publish = async (envelope: unknown) => {
      channel.publish(exchange, 'internal.webhook.disabled', Buffer.from(JSON.stringify(envelope)), {
        persistent: true,
      });
      await channel.waitForConfirms();
    };
    await publish(original.envelope);
    const sentinelId = '0195f3a2-0000-7000-8000-00000000beef';
    await publish({
      ...original.envelope,
      id: '0195f3a2-0000-7000-8000-00000000cafe',
      data: { ...original.envelope.data, webhook_id: sentinelId, endpoint: 'https://sentinel.example.com/hook' },
    });
    await waitFor(
      'the second notice to each admin',
      () => mailTo(people.ada).length >= 2 && mailTo(people.grace).length >= 2,
      60_000,
    );
  } finally {
    await connection.close();
  }
  expect(mailTo(people.ada).filter((m) => m.text.includes(`/dashboard/webhooks/${hookId}`))).toHaveLength(1);
  expect(mailTo(people.grace).filter((m) => m.text.includes(`/dashboard/webhooks/${hookId}`))).toHaveLength(1);
  expect(mailTo(people.ada)).toHaveLength(2);
  expect(mailTo(people.linus)).toEqual([]);
});
