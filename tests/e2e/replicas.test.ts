// Two replicas of every service under one stream of mail: singles with idempotency keys (each sent twice,
// as a client retrying), batches, scheduled emails and domain checks. Work shared through the broker and
// Postgres must still have one effect: one delivery per recipient, one webhook per event, one firing per
// timer, one domain check per command.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Kysely } from 'kysely';
import pg from 'pg';
import type { Resend } from 'resend';
import { SERVICE_NAMES } from '@postline/contracts';
import { createDb } from '@postline/platform';
import {
  createVerifiedDomain,
  dataOf,
  makeTimerDue,
  nudgeUntil,
  observeBroker,
  sendThroughOutage,
  startDeliveringSystem,
  startWebhookReceiver,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type SinkMx,
  type System,
  type WebhookReceiver,
  testResend,
} from '@postline/testing';

const RCPT = 'replicas-rcpt.example.net';
let system: System;
let dns: DnsServer;
let sink: SinkMx;
let hooks: WebhookReceiver;
let events: BrokerObserver;
let commands: BrokerObserver;
let resend: Resend;
let from: string;
let domainId: string;
/** The system's database, for makeTimerDue. */
let db: Kysely<unknown>;

beforeAll(async () => {
  ({ dns, sink, system } = await startDeliveringSystem(
    RCPT,
    // Twelve processes, each with its pool and its LISTEN connection: three in each pool (not the systems' four)
    // keep this file and the one beside it (a shared system's six, or two schedulers of their own) within
    // Postgres's 100. Fewer would leave a claim's refresh waiting behind a relay's and a consumer's commits.
    { RATE_LIMIT_PER_SECOND: '1000', POSTLINE_DELAY_SCALE: '0.001', DATABASE_POOL_SIZE: '3' },
    { replicas: Object.fromEntries(SERVICE_NAMES.map((name) => [name, 2])) },
  ));
  const prefix = String(system.env.BROKER_PREFIX);
  const amqpUrl = String(system.env.AMQP_URL);
  events = await observeBroker({
    amqpUrl,
    prefix,
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  commands = await observeBroker({
    amqpUrl,
    prefix,
    bindings: [
      { exchange: 'commands', pattern: 'domain-verifier.check-domain' },
      { exchange: 'commands', pattern: 'sender.send-scheduled' },
    ],
  });
  // One connection: twelve services' pools beside the run's shared systems come close to Postgres's limit.
  db = createDb<unknown>({ url: String(system.env.DATABASE_URL), schema: 'scheduler', max: 1 }).db;
  hooks = await startWebhookReceiver();
  resend = testResend(String((await system.admin('team', 'create', '--name', 'Replicas')).api_key), system.apiUrl);
  const domain = await createVerifiedDomain({ resend, dns, events, name: 'replicas.example.com' });
  from = `Replicas <hello@${domain.name}>`;
  domainId = domain.id;
  dataOf(
    await resend.webhooks.create({
      endpoint: `${hooks.url}/in`,
      events: ['email.sent', 'email.delivered', 'email.scheduled'],
    }),
  );
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await events?.close();
  await commands?.close();
  await system?.stop();
  await hooks?.close();
  await sink?.close();
  await dns?.close();
}, 60_000);

describe('two replicas of every service', () => {
  it('deliver each recipient once, send each webhook once, fire each timer once and run each domain check once', async () => {
    expect(system.replicas.map((r) => r.name).sort()).toEqual([...SERVICE_NAMES].sort());
    const recipients: string[] = [];
    const rcpt = (label: string) => {
      const address = `${label}-${recipients.length}@${RCPT}`;
      recipients.push(address);
      return address;
    };
    const ids = new Set<string>();

    // 40 singles, each sent twice with its idempotency key (the second answer replays the first).
    for (let i = 0; i < 40; i++) {
      const body = { from, to: [rcpt('single')], subject: `single ${i}`, html: '<p>hi</p>' };
      const first = dataOf(await sendThroughOutage(() => resend.emails.send(body, { idempotencyKey: `single-${i}` })));
      const again = dataOf(await resend.emails.send(body, { idempotencyKey: `single-${i}` }));
      expect(again.id).toBe(first.id);
      ids.add(first.id);
    }
    // 4 batches of 10.
    for (let b = 0; b < 4; b++) {
      const batch = dataOf(
        await sendThroughOutage(() =>
          resend.batch.send(
            Array.from({ length: 10 }, (_, i) => ({
              from,
              to: [rcpt('batch')],
              subject: `batch ${b}.${i}`,
              html: '<p>b</p>',
            })),
            { idempotencyKey: `batch-${b}` },
          ),
        ),
      );
      for (const { id } of batch.data) ids.add(id);
    }
    // 10 scheduled an hour ahead, their timers made due below: each fires once, from whichever scheduler
    // replica claims it.
    const at = 'in 1 hour';
    const scheduled = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const body = { from, to: [rcpt('scheduled')], subject: `later ${i}`, html: '<p>s</p>', scheduledAt: at };
      const { id } = dataOf(
        await sendThroughOutage(() => resend.emails.send(body, { idempotencyKey: `scheduled-${i}` })),
      );
      ids.add(id);
      scheduled.add(id);
    }
    // Two manual checks of the domain, while its scheduled checks go on.
    dataOf(await resend.domains.verify(domainId));
    dataOf(await resend.domains.verify(domainId));
    const firedIds = () =>
      new Set(
        commands.messages.filter((m) => m.routingKey === 'sender.send-scheduled').map((m) => m.envelope.data.email_id),
      );
    await nudgeUntil(
      'every scheduled email fired',
      commands.waitFor('the last scheduled email fired', () => [...scheduled].every((id) => firedIds().has(id)), {
        timeoutMs: 30_000,
      }),
      () => makeTimerDue(db, ...[...scheduled].map((id) => `email-send:${id}`)),
      30_000,
    );

    await sink.waitForMessages(recipients.length, 90_000);
    // Only this stream's emails (the domain's verification probe mails a sandbox address too).
    const delivered = (type: string) =>
      hooks.deliveries.filter((d) => d.json.type === type && ids.has(String(d.json.data.email_id)));
    await hooks.waitFor(
      'every email.delivered',
      () => new Set(delivered('email.delivered').map((d) => d.json.data.email_id)).size === ids.size,
      90_000,
    );
    await hooks.waitFor(
      'every email.sent and email.scheduled',
      () => delivered('email.sent').length >= ids.size && delivered('email.scheduled').length >= scheduled.size,
      60_000,
    );

    // One delivery per recipient: after everything arrived, nothing further (a double would be late, so
    // wait until the queues of both sender replicas are empty first).
    await waitFor(
      'the delivery queues drained',
      async () => (await queuedMessages(system, 'sender.deliver')) === 0,
      30_000,
    );
    const perRecipient = new Map<string, number>();
    for (const message of sink.messages)
      for (const to of message.to) perRecipient.set(to, (perRecipient.get(to) ?? 0) + 1);
    expect([...perRecipient.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(new Set(perRecipient.keys())).toEqual(new Set(recipients));

    // One webhook per event per endpoint (the receiver answers 200, so each event has exactly one attempt).
    const byWebhookId = new Map<string, number>();
    for (const d of hooks.deliveries)
      byWebhookId.set(d.headers['webhook-id'] ?? '', (byWebhookId.get(d.headers['webhook-id'] ?? '') ?? 0) + 1);
    expect([...byWebhookId.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(delivered('email.sent')).toHaveLength(ids.size);
    expect(delivered('email.delivered')).toHaveLength(ids.size);
    expect(delivered('email.scheduled')).toHaveLength(scheduled.size);

    // One firing per timer: each scheduled email's send command was published once.
    const fired = commands.messages.filter((m) => m.routingKey === 'sender.send-scheduled');
    expect(fired.map((m) => m.envelope.data.email_id).sort()).toEqual([...scheduled].sort());

    // One scheduled domain check per check command, whichever replica took it (the two manual checks run
    // inside their requests). Commands keep coming on the re-check schedule: a double effect shows as more
    // rows than commands, which never catches up; one effect each meets the count.
    const client = new pg.Client({ connectionString: String(system.env.DATABASE_URL) });
    await client.connect();
    try {
      const checkCommands = () =>
        commands.messages.filter(
          (m) => m.routingKey === 'domain-verifier.check-domain' && m.envelope.data.domain_id === domainId,
        ).length;
      expect(checkCommands()).toBeGreaterThan(0);
      await waitFor(
        'one scheduled check per command',
        async () => (await checkRows(client, domainId, 'scheduled')) === checkCommands(),
        20_000,
      );
      // createVerifiedDomain's own check, then the two above.
      expect(await checkRows(client, domainId, 'manual')).toBe(3);
    } finally {
      await client.end();
    }
  }, 240_000);
});

async function checkRows(db: pg.Client, id: string, trigger: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'select count(*)::int as n from domain_verifier.domain_checks where domain_id = $1 and trigger = $2',
    [id, trigger],
  );
  return rows[0]?.n ?? 0;
}

/** Messages waiting in a consumer's work queue, as the services report it on /metrics. */
async function queuedMessages(sys: System, queue: string): Promise<number> {
  const text = await (await fetch(`${sys.services.sender.url}/metrics`)).text();
  const match = new RegExp(
    `broker_queue_messages\\{[^}]*queue="[^"]*\\.${queue.replace('.', '\\.')}"[^}]*\\} (\\d+)`,
  ).exec(text);
  return Number(match?.[1] ?? 0);
}
