// Services killed (SIGKILL: nothing of their shutdown runs) or stopped (SIGTERM) in the middle of their
// work, then started again, on a system of this file's own (the other end-to-end files share one that
// nothing stops): a broadcast's fan-out, a contact import and a webhook attempt each resume and end with
// every piece of work done exactly once, and a stopped service exits cleanly. The official resend SDK
// through the real gateway; the recipients' MX is a local smtp-server sink, webhooks go to a local receiver.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import amqp from 'amqplib';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Resend } from 'resend';
import { createDb } from '@postline/platform';
import {
  createVerifiedDomain,
  dataOf,
  deliveredEnvelope,
  observeBroker,
  startDeliveringSystem,
  startWebhookReceiver,
  testResend,
  verifyDelivery,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type ReceivedDelivery,
  type SinkMessage,
  type SinkMx,
  type System,
  type WebhookReceiver,
} from '@postline/testing';
import { SCHEMA as SENDER_SCHEMA } from '../../services/sender/src/config.ts';
import type { SenderDb } from '../../services/sender/src/db/schema.ts';

jest.setTimeout(60_000);

const RCPT = 'restarts.test';

let system: System;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let db: Kysely<SenderDb>;
let resend: Resend;
let apiKey: string;
let teamId: string;
let domain: string;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  ({ dns, sink, system } = await startDeliveringSystem(RCPT, { RATE_LIMIT_PER_SECOND: '1000' }));
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA }).db;
  const team = await system.admin('team', 'create', '--name', 'Restarts');
  apiKey = String(team.api_key);
  teamId = String(team.team_id);
  resend = testResend(apiKey, system.apiUrl);
  domain = (await createVerifiedDomain({ resend, dns, events, name: `${unique('r')}.example.com` })).name;
}, 90_000);

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await db?.destroy();
  await events?.close();
  await system?.stop();
  await sink?.close();
  await dns?.close();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

function header(message: SinkMessage, name: string): string | undefined {
  const head = message.raw.toString('utf8').split('\r\n\r\n')[0] ?? '';
  const unfolded = head.replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}: (.*)$`, 'im').exec(unfolded)?.[1];
}

async function call(method: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'user-agent': 'test' },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a broadcast fan-out', () => {
  async function sentTo(broadcastId: string): Promise<number> {
    const { rows } = await sql<{ n: string }>`select count(*) as n from broadcast_recipients
      where broadcast_id = ${broadcastId}::uuid and email_id is not null`.execute(db);
    return Number(rows[0]?.n);
  }

  /**
   * A segment of `count` contacts at `<tag>-<n>@<at>`, inserted with SQL as the benchmarks do (the
   * audience's own tests cover the API that writes them).
   */
  async function bigSegment(count: number, at: string): Promise<{ segmentId: string; tag: string }> {
    const segmentId = dataOf(await resend.segments.create({ name: unique('big') })).id;
    const tag = unique('c');
    await sql`with made as (
        insert into contacts (id, team_id, email, first_name, properties, created_at, updated_at)
        select (lpad(to_hex(1700000000000 + n), 12, '0') || '7' || substr(md5(${tag} || n), 1, 3) || '8' || substr(md5(${tag} || n), 4, 15))::uuid,
          ${teamId}::uuid, ${tag} || '-' || n || '@' || ${at}, 'Contact ' || n, '{}', now(), now()
        from generate_series(1, ${count}) as n
        returning id)
      insert into contact_segments (segment_id, contact_id, team_id) select ${segmentId}::uuid, id, ${teamId}::uuid from made`.execute(
      db,
    );
    return { segmentId, tag };
  }

  it('resumes after the sender is killed mid-fan-out: every contact gets exactly one email', async () => {
    const count = 20_000;
    const { segmentId, tag } = await bigSegment(count, RCPT);
    let before = sink.messages.length;
    const { id } = dataOf(
      await resend.broadcasts.create({
        segmentId,
        from: `Acme <news@${domain}>`,
        subject: 'News for {{{contact.first_name|there}}}',
        html: '<p>Hi {{{contact.first_name|there}}}. <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
        text: 'Hi {{{FIRST_NAME|there}}}: {{{EMAIL}}} {{{POSTLINE_UNSUBSCRIBE_URL}}}',
        send: true,
      }),
    );
    await waitFor('a first page', async () => (await sentTo(id)) > 0, 30_000);
    await system.kill('sender');
    expect(await sentTo(id)).toBeLessThan(count);
    await system.restart('sender');
    await waitFor('the broadcast sent', async () => dataOf(await resend.broadcasts.get(id)).status === 'sent', 90_000);
    expect(await sentTo(id)).toBe(count);
    const { rows } = await sql<{ emails: string; addresses: string }>`select count(*) as emails,
        count(distinct lower(e.to_addresses[1])) as addresses
      from broadcast_recipients br join emails e on e.id = br.email_id where br.broadcast_id = ${id}::uuid`.execute(db);
    expect(rows[0]).toEqual({ emails: String(count), addresses: String(count) });
    // Each address's messages at the sink, by Message-ID. The kill may also cut SMTP transactions whose 250
    // was not recorded: those are sent again after the restart (RFC 1047, docs/operations.md) as copies of
    // the same email, with the same Message-ID. What must hold is one email per contact.
    const messageIds = new Map<string, Set<string>>();
    const receivedAddresses = () => {
      for (const message of sink.messages.slice(before)) {
        const to = message.to.find((address) => address.includes(tag));
        if (to === undefined) continue;
        const ids = messageIds.get(to) ?? new Set<string>();
        ids.add(header(message, 'Message-ID') ?? '');
        messageIds.set(to, ids);
      }
      before = sink.messages.length;
      return messageIds.size;
    };
    await waitFor('a message at the sink for every contact', () => receivedAddresses() === count, 180_000);
    expect([...messageIds.values()].filter((ids) => ids.size !== 1)).toEqual([]);
  }, 330_000);
});

describe('a contact import', () => {
  type ImportRecord = {
    status: string;
    counts: { total: number; created: number; updated: number; skipped: number; failed: number };
    errors?: { row: number; reason: string }[];
  };

  /** GET /contacts/imports/{id} over plain HTTP: the record with our `errors` field. */
  async function record(id: string): Promise<ImportRecord> {
    const res = await call('GET', `/contacts/imports/${id}`);
    expect(res.status).toBe(200);
    return res.body as unknown as ImportRecord;
  }

  async function finished(id: string, timeoutMs: number): Promise<ImportRecord> {
    let last: ImportRecord | undefined;
    await waitFor(
      `import ${id} to finish`,
      async () => {
        last = await record(id);
        return last.status === 'completed' || last.status === 'failed';
      },
      timeoutMs,
    );
    return last as ImportRecord;
  }

  /** Waits until the import has committed more than `rows` rows and is not finished; returns what it committed. */
  async function partWay(id: string, rows: number): Promise<number> {
    let seen: ImportRecord | undefined;
    await waitFor(
      `the import past ${rows} rows`,
      async () => {
        seen = await record(id);
        return seen.counts.total > rows;
      },
      30_000,
    );
    expect(seen?.status).toBe('in_progress');
    return (seen as ImportRecord).counts.total;
  }

  async function committedRows(id: string): Promise<number> {
    return (await db.selectFrom('contact_imports').select('total').where('id', '=', id).executeTakeFirstOrThrow())
      .total;
  }

  it('resumes from the last committed chunk after a crash and after a shutdown: exact counts, no contact written twice', async () => {
    const plan = unique('plan_');
    const seats = unique('seats_');
    dataOf(await resend.contactProperties.create({ key: plan, type: 'string' }));
    dataOf(await resend.contactProperties.create({ key: seats, type: 'number' }));
    const rows = 80_000;
    const tag = unique('r');
    const segment = dataOf(await resend.segments.create({ name: unique('resumed') })).id;
    const lines = Array.from(
      { length: rows },
      (_, i) => `r${i}.${tag}@example.com,"First ${i}\nline two",${i % 2 === 0 ? 'pro' : 'free'},${i}`,
    );
    const commands = await observeBroker({
      amqpUrl: String(system.env.AMQP_URL),
      prefix: String(system.env.BROKER_PREFIX),
      bindings: [{ exchange: 'commands', pattern: 'sender.import-contacts' }],
    });
    const csv = `email,first_name,${plan},${seats}\n${lines.join('\n')}\n`;
    const created = dataOf(
      await resend.contacts.imports.create({
        file: new Blob([csv], { type: 'text/csv' }),
        segments: [{ id: segment }],
      }),
    );
    expect(created).toEqual({ object: 'contact_import', id: expect.any(String) });
    const id = created.id;
    const commandsOf = () => commands.messages.filter((m) => m.envelope.data.import_id === id).length;

    // Killed (nothing of its shutdown runs) once some chunks are committed and before the last.
    await partWay(id, 0);
    await system.kill('sender');
    const atCrash = await committedRows(id);
    expect(atCrash).toBeGreaterThan(0);
    expect(atCrash).toBeLessThan(rows);
    // The crashed run's command is redelivered: no new one.
    expect(commandsOf()).toBe(1);
    await system.restart('sender');

    // Stopped (SIGTERM) further on: the run hands the rest over to a new command before the process exits.
    await partWay(id, atCrash);
    expect(await system.terminate('sender')).toBe(0);
    const atShutdown = await committedRows(id);
    expect(atShutdown).toBeLessThan(rows);
    await system.restart('sender');
    await commands.waitFor(
      'the command handing the rest over',
      (m) => m.envelope.data.import_id === id && commandsOf() === 2,
    );

    const done = await finished(id, 60_000);
    await commands.close();
    expect(done).toMatchObject({
      status: 'completed',
      counts: { total: rows, created: rows, updated: 0, skipped: 0, failed: 0 },
      errors: [],
    });
    const { rows: written } = await sql<{ contacts: string; addresses: string; members: string }>`
      select count(*) as contacts, count(distinct email_key) as addresses,
        (select count(*) from contact_segments where segment_id = ${segment}) as members
      from contacts where email like ${`%.${tag}@example.com`}`.execute(db);
    expect(written[0]).toEqual({ contacts: String(rows), addresses: String(rows), members: String(rows) });
    // A large import leaves the planner fresh statistics of what it wrote.
    await waitFor('the contacts to be analyzed', async () => {
      const { rows: stats } = await sql<{ analyzed: boolean }>`select last_analyze is not null as analyzed
        from pg_stat_user_tables where schemaname = 'sender' and relname = 'contacts'`.execute(db);
      return stats[0]?.analyzed === true;
    });
    const last = dataOf(await resend.contacts.get({ email: `r${rows - 1}.${tag}@example.com` }));
    expect(last).toMatchObject({
      first_name: `First ${rows - 1}\nline two`,
      properties: { [plan]: { value: 'free', type: 'string' }, [seats]: { value: rows - 1, type: 'number' } },
    });
  }, 120_000);
});

describe('a webhook attempt', () => {
  it('makes a first attempt that a crash cut short again after the restart, with the same webhook-id, and records the event once', async () => {
    const r = await startWebhookReceiver();
    receivers.push(r);
    // The first request is answered after 3 s; the dispatcher dies while it waits, before the record is written.
    r.reply((_delivery, n) => (n === 1 ? { status: 200, delayMs: 3_000 } : { status: 200 }));
    const hook = dataOf(await resend.webhooks.create({ endpoint: r.url, events: ['email.delivered'] }));
    // An event published as the sender would (through the broker), for this file's team.
    const emailId = randomUUID();
    const connection = await amqp.connect(String(system.env.AMQP_URL));
    try {
      const channel = await connection.createChannel();
      channel.publish(
        `${String(system.env.BROKER_PREFIX)}.events`,
        'email.delivered',
        Buffer.from(JSON.stringify(deliveredEnvelope({ teamId, emailId }))),
        { persistent: true },
      );
      await channel.close();
    } finally {
      await connection.close();
    }
    const forEmail = (d: ReceivedDelivery) => d.json.data.email_id === emailId;
    await r.waitFor('the first attempt', (ds) => ds.some(forEmail));
    await system.kill('webhook-dispatcher');
    await system.restart('webhook-dispatcher');

    // The event's message was never acked: the new process takes it and makes the attempt again. (Had the
    // machine been slow enough for the record to be written pending before the kill, the first-attempt
    // sweeper makes it instead, after 30 s, with the same id: hence the longer wait.)
    await r.waitFor('the attempt made again', (ds) => ds.filter(forEmail).length === 2, 50_000);
    const [first, again] = r.deliveries.filter(forEmail) as [ReceivedDelivery, ReceivedDelivery];
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(again.body).toBe(first.body);
    expect(verifyDelivery(again, hook.signing_secret)).toBe(true);
    const eventId = again.headers['webhook-id']!;
    await waitFor(
      'recorded',
      async () => (await call('GET', `/webhooks/${hook.id}/events/${eventId}`)).body.status === 'success',
    );
    expect((await call('GET', `/webhooks/${hook.id}/events`)).body.data).toHaveLength(1);
    expect((await call('GET', `/webhooks/${hook.id}/events/${eventId}/attempts`)).body.data).toHaveLength(1);
  });
});

describe('a stopped service', () => {
  it('exits cleanly on SIGTERM', async () => {
    expect(await system.terminate('scheduler')).toBe(0);
  });
});
