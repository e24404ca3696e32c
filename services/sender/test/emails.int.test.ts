// Sending end to end: the official resend SDK through the real gateway, the real sender, scheduler and
// domain-verifier processes on RabbitMQ and Postgres; the outside world faked over real sockets: a DNS
// server for the customer's and the recipients' zones, and smtp-server sinks as the recipients' MX hosts.
// POSTLINE_DELAY_SCALE shrinks the SMTP back-off (5 min → 6 ms) and the 5-day give-up window (→ ~8.6 s), which
// the tests that reach it move back in the database instead of waiting it out.
import { randomBytes, randomUUID as randomUuid } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { Resend } from 'resend';
import {
  createVerifiedDomain,
  dataOf,
  defaultSinkBehaviour,
  observeBroker,
  startWebhookReceiver,
  verifyDelivery,
  nextSecond,
  waitFor,
  makeTimerDue,
  nudgeUntil,
  type BrokerObserver,
  type DnsServer,
  type ObservedMessage,
  type SinkMx,
  type SharedSystem,
  sendThroughOutage,
  testResend,
  uniqueDomain,
  useSystem,
} from '@postline/testing';
import { createDb } from '@postline/platform';
import { sql, type Kysely } from 'kysely';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';

jest.setTimeout(60_000);

const SCALE = 0.00002;
const RCPT = uniqueDomain('rcpt');

let system: SharedSystem;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let resend: Resend;
let apiKey: string;
let domain: string;
let domainId: string;
let dkimRecord: string;
let db: Kysely<SenderDb>;
/** recipient local part → how many more times to answer 452 before accepting */
const softLeft = new Map<string, number>();

const world = useSystem({
  rcptDomain: RCPT,
  env: { POSTLINE_DELAY_SCALE: String(SCALE) },
  sink: {
    behaviour: (rcpt) => {
      const local = rcpt.split('@')[0] ?? '';
      const left = softLeft.get(local);
      if (left !== undefined) {
        softLeft.set(local, left - 1);
        return left > 0 ? 452 : 250;
      }
      return defaultSinkBehaviour(rcpt);
    },
  },
});

beforeAll(async () => {
  ({ dns, sink, system } = world);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [
      { exchange: 'events', pattern: 'email.*' },
      { exchange: 'events', pattern: 'suppression.*' },
      { exchange: 'events', pattern: 'internal.domain.state' },
    ],
  });
  const team = await system.admin('team', 'create', '--name', 'Sending');
  apiKey = String(team.api_key);
  resend = testResend(apiKey, system.apiUrl);
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA }).db;
  ({ domain, domainId, dkimRecord } = await verifiedDomain());
}, 90_000);

afterAll(async () => {
  await events?.close();
  await db?.destroy();
}, 30_000);

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${counter++}`;

async function verifiedDomain() {
  const verified = await createVerifiedDomain({ resend, dns, events, name: `${unique('s')}.example.com` });
  return { domain: verified.name, domainId: verified.id, dkimRecord: verified.dkimRecord, names: verified.recordNames };
}

type SendOptions = Partial<Parameters<Resend['emails']['send']>[0]>;

async function send(options: SendOptions, from = domain, requestOptions?: { idempotencyKey?: string }) {
  return resend.emails.send(
    {
      from: `Acme <hello@${from}>`,
      to: `ok@${RCPT}`,
      subject: 'Hello',
      html: '<p>Hello <b>there</b></p>',
      ...options,
    } as Parameters<Resend['emails']['send']>[0],
    requestOptions,
  );
}

async function sendOk(options: SendOptions): Promise<string> {
  const { data, error } = await send(options);
  if (error || !data) throw new Error(JSON.stringify(error));
  return data.id;
}

function eventFor(
  type: string,
  emailId: string,
  extra: (m: ObservedMessage) => boolean = () => true,
  timeoutMs = 20_000,
) {
  return events.waitFor(
    `${type} ${emailId}`,
    (m) => m.routingKey === type && m.envelope.data.email_id === emailId && extra(m),
    { timeoutMs },
  );
}

/**
 * Waits for `type` on an email that keeps being deferred, moving its recipients' first deferral back past the
 * delivery lifetime (5 days, at any POSTLINE_DELAY_SCALE) until the sender gives up: the end of the window
 * without waiting it out. Moved again on each check, since an attempt in flight writes back the time it read.
 */
async function afterLifetime(type: string, emailId: string): Promise<ObservedMessage> {
  return nudgeUntil(
    `${type} once the lifetime has passed`,
    eventFor(type, emailId, () => true, 30_000),
    () =>
      sql`update recipients set first_deferred_at = now() - interval '6 days'
      where email_id = ${emailId}::uuid and first_deferred_at is not null`.execute(db),
    30_000,
  );
}

const eventsOf = (emailId: string) =>
  events.messages.filter((m) => m.envelope.data.email_id === emailId).map((m) => m.routingKey);

describe('POST /emails to a real MX', () => {
  it('delivers a DKIM-signed message that verifies, with a VERP envelope sender, and reports sent then delivered', async () => {
    const id = await sendOk({
      to: `ok-dkim@${RCPT}`,
      text: 'plain',
      headers: { 'X-Entity-Ref-ID': 'ref-1' },
      tags: [{ name: 'kind', value: 'welcome' }],
    });
    const delivered = await eventFor('email.delivered', id);
    expect(delivered.envelope.data).toMatchObject({
      to: [`ok-dkim@${RCPT}`],
      subject: 'Hello',
      tags: { kind: 'welcome' },
    });
    expect(eventsOf(id).slice(0, 2)).toEqual(['email.sent', 'email.delivered']);

    const message = sink.messages.find((m) => m.to.includes(`ok-dkim@${RCPT}`));
    expect(message).toBeDefined();
    expect(message?.from).toMatch(
      new RegExp(`^b\\.${id.replaceAll('-', '')}\\.0\\.[a-z2-7]{10}@send\\.${domain.replaceAll('.', '\\.')}$`),
    );
    expect(message?.secure).toBe(true);
    const raw = message?.raw.toString('utf8') ?? '';
    expect(raw).toMatch(/^DKIM-Signature: /m);
    expect(raw).not.toMatch(/^Bcc:/im);
    expect(raw).toMatch(/^X-Entity-Ref-ID: ref-1/m);

    const selectorName = /s=([^;\s]+)/.exec(raw)?.[1];
    const result = await dkimVerify(message?.raw as Buffer, {
      resolver: (name: string, type: string) => {
        if (type === 'TXT' && name === `${selectorName}._domainkey.${domain}`) return Promise.resolve([[dkimRecord]]);
        return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
      },
    });
    expect(result.results[0]?.status.result).toBe('pass');
    expect(result.results[0]?.signingDomain).toBe(domain);

    const { data } = await resend.emails.get(id);
    expect(data).toMatchObject({
      object: 'email',
      id,
      last_event: 'delivered',
      to: [`ok-dkim@${RCPT}`],
      from: `Acme <hello@${domain}>`,
    });
  });

  it('gives one delivered, one retried and one bounced-and-suppressed recipient for 250/452/550 in one transaction', async () => {
    const soft = unique('softonce');
    softLeft.set(soft, 1);
    const hard = `${unique('hard')}@${RCPT}`;
    const id = await sendOk({ to: [`${unique('ok')}@${RCPT}`, `${soft}@${RCPT}`, hard] });

    const bounced = await eventFor('email.bounced', id);
    expect(bounced.envelope.data).toMatchObject({
      to: [hard],
      bounce: { type: 'Permanent', subType: 'General', diagnosticCode: ['smtp; 550 5.1.1 No such user here'] },
    });
    await events.waitFor(
      'suppression.added',
      (m) => m.routingKey === 'suppression.added' && m.envelope.data.email === hard && m.envelope.data.source_id === id,
    );
    await eventFor('email.delivery_delayed', id, (m) => (m.envelope.data.to as string[])[0] === `${soft}@${RCPT}`);
    // The retry delivers the soft recipient in a later transaction; the others are not sent again.
    await eventFor('email.delivered', id, (m) => (m.envelope.data.to as string[]).includes(`${soft}@${RCPT}`));
    const copies = sink.messages.filter((m) => m.raw.toString().includes(`Message-ID: <${id}@`));
    expect(copies.map((m) => m.to)).toEqual([[expect.stringMatching(/^ok/)], [`${soft}@${RCPT}`]]);

    // A later email to the suppressed address is skipped.
    const next = await sendOk({ to: hard });
    const suppressed = await eventFor('email.suppressed', next);
    expect(suppressed.envelope.data).toMatchObject({
      to: [hard],
      suppressed: { type: 'OnAccountSuppressionList', reason: 'previous_bounce' },
    });
    expect(sink.messages.some((m) => m.raw.toString().includes(`<${next}@`))).toBe(false);
  });

  it('retries a connection cut after DATA and never counts it delivered; gives up after the window with a transient bounce', async () => {
    const rcpt = `${unique('drop')}@${RCPT}`;
    const id = await sendOk({ to: rcpt });
    await eventFor('email.delivery_delayed', id);
    const final = await afterLifetime('email.bounced', id);
    expect(final.envelope.data).toMatchObject({ bounce: { type: 'Transient', subType: 'General' } });
    expect(eventsOf(id)).not.toContain('email.delivered');
    const { data } = await resend.emails.get(id);
    expect(data?.last_event).toBe('bounced');
  });
});

describe('feedback after delivery (from the inbound MX)', () => {
  it('a complaint emits email.complained and suppresses the address; a later send is skipped', async () => {
    const to = `${unique('complainer')}@${RCPT}`;
    const id = await sendOk({ to });
    await eventFor('email.delivered', id);
    events.publishEvent('internal.email.feedback', teamIdOf(), {
      email_id: id,
      recipient: to,
      kind: 'complaint',
      feedback_type: 'abuse',
    });
    await eventFor('email.complained', id);
    await events.waitFor(
      'complaint suppression',
      (m) =>
        m.routingKey === 'suppression.added' && m.envelope.data.email === to && m.envelope.data.origin === 'complaint',
    );
    expect((await resend.emails.get(id)).data?.last_event).toBe('complained');
    const next = await sendOk({ to });
    const skipped = await eventFor('email.suppressed', next);
    expect(skipped.envelope.data).toMatchObject({ suppressed: { reason: 'previous_complaint' } });
  });

  it('a permanent bounce report after delivery bounces and suppresses; the same report twice does nothing more', async () => {
    const to = `${unique('late')}@${RCPT}`;
    const id = await sendOk({ to });
    await eventFor('email.delivered', id);
    const report = {
      email_id: id,
      recipient: to,
      kind: 'bounce',
      bounce: {
        type: 'Permanent',
        subType: 'General',
        message: 'mailbox gone',
        diagnosticCode: ['smtp; 550 5.1.1 gone'],
      },
    };
    events.publishEvent('internal.email.feedback', teamIdOf(), report);
    await eventFor('email.bounced', id);
    await events.waitFor(
      'bounce suppression',
      (m) => m.routingKey === 'suppression.added' && m.envelope.data.email === to,
    );
    events.publishEvent('internal.email.feedback', teamIdOf(), report);
    const marker = await sendOk({ to: 'delivered@postline.test' });
    await eventFor('email.delivered', marker);
    expect(eventsOf(id).filter((t) => t === 'email.bounced')).toHaveLength(1);
  });

  it('a permanent bounce report that does not blame the address (suppress: false) bounces without suppressing', async () => {
    const to = `${unique('looped')}@${RCPT}`;
    const id = await sendOk({ to });
    await eventFor('email.delivered', id);
    events.publishEvent('internal.email.feedback', teamIdOf(), {
      email_id: id,
      recipient: to,
      kind: 'bounce',
      suppress: false,
      bounce: {
        type: 'Permanent',
        subType: 'General',
        message: 'looping',
        diagnosticCode: ['x-qmail; looping (#5.4.6)'],
      },
    });
    await eventFor('email.bounced', id);
    // A later send to the address is made, not suppressed.
    const next = await sendOk({ to });
    await eventFor('email.delivered', next);
    expect(events.messages.some((m) => m.routingKey === 'suppression.added' && m.envelope.data.email === to)).toBe(
      false,
    );
  });
});

describe('repeated transient bounces', () => {
  it('make a temporary suppression that expires by itself', async () => {
    const full = `${unique('full')}@${RCPT}`;
    for (let i = 0; i < 3; i++) {
      const id = await sendOk({ to: full });
      const bounced = await eventFor('email.bounced', id);
      expect(bounced.envelope.data).toMatchObject({ bounce: { type: 'Transient', subType: 'MailboxFull' } });
    }
    const added = await events.waitFor(
      'temporary suppression',
      (m) => m.routingKey === 'suppression.added' && m.envelope.data.email === full,
    );
    const skipped = await sendOk({ to: full });
    await eventFor('email.suppressed', skipped);
    // It lasts 3 days × POSTLINE_DELAY_SCALE (≈ 5 s). Its time is moved to now (the entry and the scheduler's
    // timer that removes it) instead of waited out.
    const id = String(added.envelope.data.id);
    const [entry] = (
      await sql<{ lasts_ms: number }>`select extract(epoch from expires_at - created_at) * 1000 as lasts_ms
        from suppressions where id = ${id}::uuid`.execute(db)
    ).rows;
    expect(Number(entry?.lasts_ms)).toBeGreaterThan(3 * 86_400_000 * SCALE * 0.9);
    expect(Number(entry?.lasts_ms)).toBeLessThan(3 * 86_400_000 * SCALE * 1.1);
    await sql`update suppressions set expires_at = now() where id = ${id}::uuid`.execute(db);
    await nudgeUntil(
      'expiry',
      events.waitFor('expiry', (m) => m.routingKey === 'suppression.removed' && m.envelope.data.id === id, {
        timeoutMs: 20_000,
      }),
      () => makeTimerDue(db, `suppression-expire:${id}`),
      20_000,
    );
    const after = await sendOk({ to: full });
    await eventFor('email.bounced', after);
  });
});

describe('destinations that cannot be reached', () => {
  it('bounces a null MX at once without connecting, and NXDOMAIN permanently', async () => {
    const nullMx = `${unique('nullmx')}.test`;
    dns.set(nullMx, [{ type: 'MX', exchange: '', priority: 0 }]);
    const before = sink.connections();
    const a = await sendOk({ to: `x@${nullMx}` });
    const b = await sendOk({ to: `x@${unique('nx')}.test` });
    const bounceA = await eventFor('email.bounced', a);
    const bounceB = await eventFor('email.bounced', b);
    expect(bounceA.envelope.data).toMatchObject({
      bounce: {
        type: 'Permanent',
        subType: 'NoEmail',
        diagnosticCode: [`smtp; 556 5.1.10 Recipient domain publishes a null MX and accepts no mail (${nullMx})`],
      },
    });
    expect(bounceB.envelope.data).toMatchObject({
      bounce: {
        type: 'Permanent',
        subType: 'NoEmail',
        diagnosticCode: [expect.stringMatching(/^smtp; 550 5\.1\.2 Recipient domain does not exist/)],
      },
    });
    expect(sink.connections()).toBe(before);
  });

  it('keeps retrying through SERVFAIL and fails when the window runs out, never bouncing on DNS trouble', async () => {
    const broken = `${unique('servfail')}.test`;
    dns.fail(broken, 'servfail');
    const id = await sendOk({ to: `x@${broken}` });
    await eventFor('email.delivery_delayed', id);
    const failed = await afterLifetime('email.failed', id);
    expect(failed.envelope.data).toMatchObject({ failed: { reason: 'delivery_timeout' } });
    expect(eventsOf(id)).not.toContain('email.bounced');
  });

  it('falls back to the next MX when the preferred one is down', async () => {
    const two = `${unique('twomx')}.test`;
    dns.set(two, [
      { type: 'MX', exchange: `b.${two}`, priority: 20 },
      { type: 'MX', exchange: `a.${two}`, priority: 10 },
    ]);
    dns.set(`a.${two}`, [{ type: 'A', address: '127.0.0.2' }]); // nothing listens there
    dns.set(`b.${two}`, [{ type: 'A', address: sink.host }]);
    const id = await sendOk({ to: `y@${two}` });
    await eventFor('email.delivered', id);
  });
});

describe('sandbox recipients at postline.test', () => {
  it('produce their events without any network delivery', async () => {
    const before = sink.connections();
    const delivered = await sendOk({ to: 'delivered+signup@postline.test' });
    const bounced = await sendOk({ to: 'bounced@postline.test' });
    const complained = await sendOk({ to: 'complained+x@postline.test' });
    const suppressed = await sendOk({ to: 'suppressed@postline.test' });
    await eventFor('email.delivered', delivered);
    const b = await eventFor('email.bounced', bounced);
    expect(b.envelope.data).toMatchObject({
      bounce: { type: 'Permanent', diagnosticCode: [expect.stringContaining('5.1.1')] },
    });
    await eventFor('email.complained', complained);
    const s = await eventFor('email.suppressed', suppressed);
    expect(s.envelope.data).toMatchObject({ suppressed: { type: 'OnAccountSuppressionList' } });
    expect(sink.connections()).toBe(before);
    // Sandbox addresses never join the list, so they behave the same every time.
    const again = await sendOk({ to: 'bounced@postline.test' });
    await eventFor('email.bounced', again);
  });
});

describe('webhooks', () => {
  it('delivers signed email.sent and email.delivered for a sandbox email to a subscribed endpoint', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { data: hook, error } = await resend.webhooks.create({
        endpoint: `${receiver.url}/hooks`,
        events: ['email.sent', 'email.delivered'],
      });
      if (error || !hook) throw new Error(JSON.stringify(error));
      const id = await sendOk({ to: 'delivered+hooks@postline.test' });
      await receiver.waitFor(
        'sent and delivered',
        (ds) => ds.filter((d) => d.json.data.email_id === id).length >= 2,
        20_000,
      );
      const mine = receiver.deliveries.filter((d) => d.json.data.email_id === id);
      expect(mine.map((d) => d.json.type).sort()).toEqual(['email.delivered', 'email.sent']);
      for (const delivery of mine) expect(verifyDelivery(delivery, hook.signing_secret)).toBe(true);
      expect(mine[0]?.json.data).toMatchObject({ email_id: id, from: `Acme <hello@${domain}>`, subject: 'Hello' });
    } finally {
      await receiver.close();
    }
  });
});

describe('the API', () => {
  it("refuses a from domain that is not the team's verified domain with 403 validation_error", async () => {
    const { error } = await send({}, 'not-mine.example.com');
    expect(error).toMatchObject({ statusCode: 403, name: 'validation_error' });
  });

  it('answers each of many concurrent sends from two teams on its own (they are written in groups)', async () => {
    const other = await system.admin('team', 'create', '--name', 'Other sender');
    const otherResend = testResend(String(other.api_key), system.apiUrl);
    const otherDomain = await createVerifiedDomain({
      resend: otherResend,
      dns,
      events,
      name: `${unique('o')}.example.com`,
    });
    const mail = (from: string, i: number) => ({
      from: `Acme <hello@${from}>`,
      to: `delivered+${i}@postline.test`,
      subject: `n${i}`,
      html: '<p>hi</p>',
    });
    const sends = Array.from({ length: 40 }, (_, i) => {
      if (i % 4 === 0) return { team: 'a', refused: true, call: resend.emails.send(mail(otherDomain.name, i)) }; // not team a's domain
      if (i % 2 === 0) return { team: 'a', refused: false, call: resend.emails.send(mail(domain, i)) };
      return { team: 'b', refused: false, call: otherResend.emails.send(mail(otherDomain.name, i)) };
    });
    const answers = await Promise.all(sends.map((s) => s.call));
    for (const [i, answer] of answers.entries()) {
      const sent = sends[i]!;
      if (sent.refused) {
        expect(answer.error).toMatchObject({ statusCode: 403, name: 'validation_error' });
        continue;
      }
      expect(answer.error).toBeNull();
      const id = answer.data!.id;
      const [own, foreign] = sent.team === 'a' ? [resend, otherResend] : [otherResend, resend];
      const got = await own.emails.get(id);
      expect(got.data).toMatchObject({ id, subject: `n${i}`, to: [`delivered+${i}@postline.test`] });
      expect((await foreign.emails.get(id)).error).toMatchObject({ statusCode: 404 });
      await eventFor('email.delivered', id);
    }
  });

  it("names bad input with the reference's errors", async () => {
    expect((await send({ from: 'nope' } as SendOptions)).error).toMatchObject({
      statusCode: 422,
      name: 'invalid_parameter',
    });
    expect((await send({ subject: undefined })).error).toMatchObject({
      statusCode: 422,
      name: 'missing_required_field',
    });
    expect((await send({ headers: { 'X-Bad': 'a\r\nBcc: victim@x.test' } })).error).toMatchObject({ statusCode: 422 });
    expect((await send({ headers: { From: 'ceo@elsewhere.test' } })).error).toMatchObject({ statusCode: 422 });
    const attachment = await send({ attachments: [{ filename: 'a.txt', path: 'https://example.com/a.txt' }] });
    expect(attachment.error).toMatchObject({ statusCode: 422, name: 'invalid_attachment' });
  });

  it('sends attachments given as base64, as bytes and as a serialised Buffer', async () => {
    const id = await sendOk({
      to: `${unique('att')}@${RCPT}`,
      attachments: [
        { filename: 'a.txt', content: Buffer.from('first file').toString('base64') },
        { filename: 'b.txt', content: Buffer.from('second file') },
      ],
    });
    await eventFor('email.delivered', id);
    const raw = sink.messages.find((m) => m.raw.toString().includes(`<${id}@`))?.raw.toString() ?? '';
    expect(raw).toContain('filename=a.txt');
    expect(raw).toContain(Buffer.from('second file').toString('base64'));
  });

  it('replays an idempotent request without creating a second email', async () => {
    const key = unique('idem');
    const to = `${unique('idem')}@${RCPT}`;
    const first = await send({ to }, domain, { idempotencyKey: key });
    const second = await send({ to }, domain, { idempotencyKey: key });
    expect(second.data?.id).toBe(first.data?.id);
    // The sender itself also deduplicates on the key the gateway forwards (a gateway that died mid-request).
    const direct = await fetch(`${system.services.sender.url}/emails`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-postline-team-id': teamIdOf(),
        'x-postline-idempotency-key': key,
      },
      body: JSON.stringify({ from: `hello@${domain}`, to, subject: 'Hello', html: '<p>x</p>' }),
    });
    expect(await direct.json()).toEqual({ id: first.data?.id });
    await eventFor('email.delivered', String(first.data?.id));
    expect(sink.messages.filter((m) => m.to.includes(to))).toHaveLength(1);
  });

  it('answers requests with one key that arrive together (a retry while the first is being written) with one email', async () => {
    // The gateway forwards a client's retry as soon as a forward fails (a cut connection, a timeout): the
    // first may still be on its way to the database when the retry arrives.
    const key = unique('together');
    const subject = unique('together');
    const answers = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const r = await fetch(`${system.services.sender.url}/emails`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-postline-team-id': teamIdOf(),
            'x-postline-idempotency-key': key,
          },
          body: JSON.stringify({ from: `hello@${domain}`, to: `ok@${RCPT}`, subject, html: '<p>x</p>' }),
        });
        return { status: r.status, body: (await r.json()) as { id: string } };
      }),
    );
    expect(new Set(answers.map((a) => `${a.status} ${a.body.id}`)).size).toBe(1);
    expect(answers[0]?.status).toBe(200);
    const rows = await db.selectFrom('emails').select('id').where('subject', '=', subject).execute();
    expect(rows.map((row) => row.id)).toEqual([answers[0]?.body.id]);
  });

  it('accepts a 16 MB attachment the Node SDK sends as a Buffer (58 MB of JSON, beyond the usual 50 MB) and delivers it intact', async () => {
    const bytes = randomBytes(16 * 1024 * 1024);
    const to = `${unique('big')}@${RCPT}`;
    const idempotencyKey = unique('big-send');
    const sent = await sendThroughOutage(() =>
      send({ to, attachments: [{ filename: 'big.bin', content: bytes }] }, domain, { idempotencyKey }),
    );
    if (sent.error || !sent.data) throw new Error(JSON.stringify(sent.error));
    const id = sent.data.id;
    await eventFor('email.delivered', id, () => true, 120_000);
    const raw = sink.messages.find((m) => m.to.includes(to))?.raw.toString('latin1') ?? '';
    expect(raw.replaceAll('\r\n', '')).toContain(bytes.toString('base64'));
    // Each try moves 58 MB through the gateway and the sender: on a machine busy with the rest of the suite,
    // a few tries take minutes.
  }, 300_000);

  it('keeps its own copy of a key for 24 hours and for the request it was used with only', async () => {
    const key = unique('idem');
    const direct = (hash: string) =>
      fetch(`${system.services.sender.url}/emails`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-postline-team-id': teamIdOf(),
          'x-postline-idempotency-key': key,
          'x-postline-idempotency-hash': hash,
        },
        body: JSON.stringify({
          from: `hello@${domain}`,
          to: 'delivered@postline.test',
          subject: hash,
          html: '<p>x</p>',
        }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

    const first = await direct('request-a');
    expect(first.status).toBe(200);
    expect(await direct('request-a')).toEqual(first);
    expect(await direct('request-b')).toEqual({
      status: 409,
      body: {
        statusCode: 409,
        name: 'invalid_idempotent_request',
        message: expect.stringContaining('different request payload'),
      },
    });

    // A day later the key is free again (the gateway forgot it too): the request is a new one.
    const { db } = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA });
    try {
      await db
        .updateTable('accepted_requests')
        .set({ created_at: new Date(Date.now() - 24 * 3600_000 - 1000) })
        .where('idempotency_key', '=', key)
        .execute();
    } finally {
      await db.destroy();
    }
    const later = await direct('request-b');
    expect(later.status).toBe(200);
    expect(later.body.id).not.toBe(first.body.id);
    await eventFor('email.delivered', String(later.body.id));
  });

  it('lists emails newest first with keyset pagination', async () => {
    const a = await sendOk({ to: 'delivered@postline.test' });
    const b = await sendOk({ to: 'delivered@postline.test' });
    const { data } = await resend.emails.list({ limit: 2 });
    expect(data?.data.map((e) => e.id)).toEqual([b, a]);
    expect(data?.has_more).toBe(true);
    const next = await resend.emails.list({ limit: 1, after: a });
    expect(next.data?.data[0]?.id).not.toBe(a);
  });
});

/** The status of a request whose body is not wanted (read off, so the connection goes back to the pool). */
async function statusOf(url: string, init?: RequestInit): Promise<number> {
  const res = await fetch(url, init);
  await res.body?.cancel();
  return res.status;
}

describe('attachments and share links of a sent email', () => {
  it('lists and gets the attachments, with download links that serve their bytes without a key', async () => {
    const png = randomBytes(300);
    const id = await sendOk({
      to: 'delivered@postline.test',
      html: '<p>Logo: <img src="cid:logo"></p>',
      attachments: [
        { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 invoice').toString('base64') },
        { filename: 'logo.png', content: png, contentId: 'logo' },
        { content: Buffer.from('no name').toString('base64'), contentType: 'text/plain' },
      ],
    });
    const list = await resend.emails.attachments.list({ emailId: id });
    expect(list.error).toBeNull();
    const items = list.data!.data;
    expect(items.map((a) => [a.filename, a.size, a.content_type, a.content_disposition, a.content_id ?? null])).toEqual(
      [
        ['invoice.pdf', 16, 'application/pdf', 'attachment', null],
        ['logo.png', 300, 'image/png', 'inline', 'logo'],
        ['attachment-3.txt', 7, 'text/plain', 'attachment', null],
      ],
    );
    expect(list.data!.has_more).toBe(false);
    const [invoice, logo] = items;
    expect(Date.parse(invoice!.expires_at) - Date.now()).toBeGreaterThan(50 * 60_000);

    const got = await resend.emails.attachments.get({ emailId: id, id: logo!.id });
    expect(got.data).toMatchObject({ object: 'attachment', id: logo!.id, filename: 'logo.png', size: 300 });

    // The download link needs no key, and serves the bytes as a download, never as a page.
    const download = await fetch(logo!.download_url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(png);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="logo.png"');
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(download.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(download.url.startsWith(`${system.apiUrl}/downloads/`)).toBe(true);

    // One page at a time, in the order they were given.
    const first = await resend.emails.attachments.list({ emailId: id, limit: 1 });
    expect(first.data).toMatchObject({ has_more: true, data: [{ id: invoice!.id }] });
    const next = await resend.emails.attachments.list({ emailId: id, limit: 1, after: invoice!.id });
    expect(next.data).toMatchObject({ has_more: true, data: [{ id: logo!.id }] });
    const back = await resend.emails.attachments.list({ emailId: id, limit: 5, before: logo!.id });
    expect(back.data).toMatchObject({ has_more: false, data: [{ id: invoice!.id }] });

    // An edited token, another email's attachment, another team's email: nothing.
    const token = new URL(invoice!.download_url).pathname.split('/').pop()!;
    const edited = await fetch(
      `${system.apiUrl}/downloads/${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`,
    );
    expect(edited.status).toBe(404);
    expect(await edited.json()).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect(await statusOf(`${system.apiUrl}/downloads/${token}`, { method: 'POST' })).toBe(405);
    expect((await resend.emails.attachments.get({ emailId: id, id: randomUuid() })).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
    const other = testResend(
      String((await system.admin('team', 'create', '--name', 'Other reader')).api_key),
      system.apiUrl,
    );
    expect((await other.emails.attachments.list({ emailId: id })).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
    expect((await other.emails.share(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    // The SDK's metrics call: the last 7 days' totals, as Resend answers them.
    const metrics = dataOf(await resend.emails.metrics({ metrics: ['sent', 'bounce_rate'] }));
    expect(metrics).toMatchObject({ object: 'metrics', dimensions: [], granularity: 'daily', data: [] });
    expect(metrics.totals.sent).toBeGreaterThan(0);
  });

  it('lists 20 attachments when no limit is given, gives ids to attachments kept before ids were, and serves an odd type', async () => {
    const many = Array.from({ length: 22 }, (_, i) => ({
      filename: `f${i}.txt`,
      content: Buffer.from(`file ${i}`).toString('base64'),
    }));
    const id = await sendOk({ to: 'delivered@postline.test', attachments: many });
    const all = await resend.emails.attachments.list({ emailId: id });
    expect(all.data!.has_more).toBe(true);
    expect(all.data!.data.map((a) => a.filename)).toEqual(many.slice(0, 20).map((a) => a.filename));

    // Rows written before attachments had ids (migration 202611291000 leaves them null) get one on first read, kept after.
    const { db } = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA });
    try {
      await db
        .updateTable('email_attachments')
        .set({ id: sql<string>`null` })
        .where('email_id', '=', id)
        .execute();
    } finally {
      await db.destroy();
    }
    const first = (await resend.emails.attachments.list({ emailId: id, limit: 100 })).data!.data;
    expect(first).toHaveLength(22);
    expect(new Set(first.map((a) => a.id)).size).toBe(22);
    expect((await resend.emails.attachments.list({ emailId: id, limit: 100 })).data!.data.map((a) => a.id)).toEqual(
      first.map((a) => a.id),
    );
    expect((await resend.emails.attachments.get({ emailId: id, id: first[5]!.id })).data).toMatchObject({
      filename: 'f5.txt',
    });

    // A type the API accepts but a header cannot carry (non-ASCII in a parameter) goes out bare.
    const odd = await sendOk({
      to: 'delivered@postline.test',
      attachments: [
        {
          filename: 'n.txt',
          content: Buffer.from('naïve').toString('base64'),
          contentType: 'text/plain; name="€.txt"',
        },
      ],
    });
    const [item] = (await resend.emails.attachments.list({ emailId: odd })).data!.data;
    const served = await fetch(item!.download_url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('text/plain');
    expect(await served.text()).toBe('naïve');
  });

  it('shares the email as a sandboxed page for as long as asked, at most 48 hours', async () => {
    const id = await sendOk({ to: 'delivered@postline.test', html: '<h1>Order 1042</h1><script>alert(1)</script>' });
    const shared = await resend.emails.share(id, { expiresIn: '10m' });
    expect(shared.error).toBeNull();
    expect(shared.data).toMatchObject({ object: 'email', id });
    const page = await fetch(shared.data!.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toMatch(/^sandbox; default-src 'none'/);
    // Remote images load, and only the install's own pages may frame it (the dashboard's preview).
    expect(policy).toContain('img-src data: https: http:');
    expect(policy).toContain("frame-ancestors 'self'");
    expect(await page.text()).toContain('<h1>Order 1042</h1>');
    // `?images=blocked` (the query passes through the gateway): no remote image is fetched.
    const blocked = await fetch(`${shared.data!.url}?images=blocked`);
    expect(blocked.headers.get('content-security-policy')).toContain("img-src data:; style-src 'unsafe-inline';");

    const text = await sendOk({ to: 'delivered@postline.test', html: undefined, text: 'Plain words' } as SendOptions);
    const plain = await fetch((await resend.emails.share(text)).data!.url);
    expect(plain.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await plain.text()).toBe('Plain words');

    // The default and longest life is 48 hours; more, or something that is not a duration, is refused.
    expect((await resend.emails.share(id)).error).toBeNull();
    expect((await resend.emails.share(id, { expiresIn: '3 days' })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
    expect((await resend.emails.share(id, { expiresIn: 'soon' })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
    expect((await resend.emails.share(randomUuid())).error).toMatchObject({ statusCode: 404, name: 'not_found' });

    const brief = await resend.emails.share(id, { expiresIn: '1s' });
    // Signed before the answer left: the link expires at the latest a second from now (the sender's clock is ours).
    const expiresBy = Date.now() + 1000;
    await waitFor('the 1 s share link to expire', () => Date.now() > expiresBy);
    expect(await statusOf(brief.data!.url)).toBe(404);
    // A share link is not a download link, nor the other way round.
    const shareToken = new URL(shared.data!.url).pathname.split('/').pop()!;
    expect(await statusOf(`${system.apiUrl}/downloads/${shareToken}`)).toBe(404);
  });
  it("answers HEAD on a download with the size alone, takes at most 10 requests a second per link, and stops serving a disabled team's links", async () => {
    const team = await system.admin('team', 'create', '--name', 'Link owner');
    const owner = testResend(String(team.api_key), system.apiUrl);
    const own = await createVerifiedDomain({ resend: owner, dns, events, name: `${unique('l')}.example.com` });
    const sent = await owner.emails.send({
      from: `hello@${own.name}`,
      to: 'delivered@postline.test',
      subject: 'Report',
      html: '<p>Report attached</p>',
      attachments: [{ filename: 'report.csv', content: Buffer.from('a,b\n1,2\n').toString('base64') }],
    });
    const id = sent.data!.id;
    const [report] = (await owner.emails.attachments.list({ emailId: id })).data!.data;
    const shareUrl = (await owner.emails.share(id)).data!.url;

    const head = await fetch(report!.download_url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('8');
    expect(head.headers.get('content-disposition')).toBe('attachment; filename="report.csv"');
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    // The gateway reads the link's team from the owner's answer and never passes it on.
    expect(head.headers.get('x-postline-team-id')).toBeNull();

    // Fifteen at once at the start of a second, through two share links of the email (each share issues a new
    // token, and the limit counts what they name): ten go through, the rest wait for the next second. A burst
    // that straddles two windows (a slow machine) goes again.
    const secondShareUrl = (await owner.emails.share(id, { expiresIn: '1 hour' })).data!.url;
    expect(secondShareUrl).not.toBe(shareUrl);
    const shareBurst = async () => {
      await nextSecond();
      return Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          fetch(i % 3 === 2 ? secondShareUrl : shareUrl).then(async (r) => ({
            status: r.status,
            retryAfter: r.headers.get('retry-after'),
            body: await r.text(),
          })),
        ),
      );
    };
    let burst = await shareBurst();
    for (let again = 0; again < 3 && burst.filter((r) => r.status === 200).length > 10; again++)
      burst = await shareBurst();
    expect(burst.filter((r) => r.status === 200)).toHaveLength(10);
    const limited = burst.filter((r) => r.status === 429);
    expect(limited).toHaveLength(5);
    expect(JSON.parse(limited[0]!.body)).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
    expect(limited[0]!.retryAfter).toBe('1');
    // The attachment's link has its own budget.
    expect(await statusOf(report!.download_url)).toBe(200);

    await system.admin('team', 'disable', '--team', String(team.team_id));
    // The burst spent this second's budget of the share link. The gateways learn of the change through
    // Postgres's NOTIFY, a moment after the command's commit.
    await nextSecond();
    await waitFor(
      "the disabled team's attachment link to be gone",
      async () => (await statusOf(report!.download_url)) === 404,
    );
    for (const url of [shareUrl, report!.download_url]) {
      const gone = await fetch(url);
      expect(gone.status).toBe(404);
      expect(await gone.json()).toMatchObject({
        statusCode: 404,
        name: 'not_found',
        message: 'This link is not valid or has expired.',
      });
    }
    await system.admin('team', 'enable', '--team', String(team.team_id));
    await waitFor(
      "the enabled team's attachment link back",
      async () => (await statusOf(report!.download_url)) === 200,
    );
    expect(await statusOf(report!.download_url)).toBe(200);
  });
});

describe('batch', () => {
  it('strict: accepts all in order, or refuses the whole batch', async () => {
    const ok = await resend.batch.send([
      { from: `hello@${domain}`, to: 'delivered@postline.test', subject: 'one', html: '<p>1</p>' },
      { from: `hello@${domain}`, to: 'delivered@postline.test', subject: 'two', text: '2' },
    ]);
    expect(ok.data?.data).toHaveLength(2);
    const [first, second] = ok.data?.data ?? [];
    expect((await resend.emails.get(String(first?.id))).data?.subject).toBe('one');
    expect((await resend.emails.get(String(second?.id))).data?.subject).toBe('two');

    const listed = (await resend.emails.list({ limit: 100 })).data?.data.length ?? 0;
    const bad = await resend.batch.send([
      { from: `hello@${domain}`, to: 'delivered@postline.test', subject: 'fine', html: '<p>1</p>' },
      { from: `hello@${domain}`, to: 'delivered@postline.test', html: '<p>no subject</p>' } as never,
    ]);
    expect(bad.error).toMatchObject({ statusCode: 422, name: 'missing_required_field' });
    expect((await resend.emails.list({ limit: 100 })).data?.data.length ?? 0).toBe(listed);
  });

  it('refuses half of a surrogate pair anywhere in the body with 422 naming the field, never a 500', async () => {
    const single = await resend.emails.send({
      from: `hello@${domain}`,
      to: 'delivered@postline.test',
      subject: 'Your order 🎉 is \ud83d',
      html: '<p>x</p>',
    });
    expect(single.error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('`subject`'),
    });
    const batch = await resend.batch.send(
      [
        { from: `hello@${domain}`, to: 'delivered@postline.test', subject: 'fine', html: '<p>1</p>' },
        { from: `hello@${domain}`, to: 'delivered@postline.test', subject: 'fine', html: '<p>\udc00</p>' },
      ],
      { batchValidation: 'permissive' },
    );
    expect(batch.error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringContaining('`[1].html`'),
    });
  });

  it('permissive: queues the valid emails and reports the others by index', async () => {
    const res = await resend.batch.send(
      [
        { from: `hello@${domain}`, to: 'delivered@postline.test', subject: 'fine', html: '<p>1</p>' },
        { from: 'hello@not-verified.example.com', to: 'delivered@postline.test', subject: 'x', html: '<p>2</p>' },
        {
          from: `hello@${domain}`,
          to: 'delivered@postline.test',
          subject: 'att',
          html: '<p>3</p>',
          attachments: [{ filename: 'a', content: 'YQ==' }],
        } as never,
        // Postgres text cannot hold a NUL: this item's error, not a failed statement for the whole batch.
        { from: `hello@${domain}`, to: 'delivered@postline.test', subject: 'nul', html: '<p>4\u0000</p>' },
      ],
      { batchValidation: 'permissive' },
    );
    expect(res.data?.data).toHaveLength(1);
    expect((res.data as unknown as { errors: { index: number; message: string }[] }).errors).toEqual([
      { index: 1, message: expect.any(String) },
      { index: 2, message: expect.any(String) },
      { index: 3, message: 'Invalid `html` field: it must not contain NUL characters.' },
    ]);
    await eventFor('email.delivered', String(res.data?.data[0]?.id));
  });
});

describe('scheduling', () => {
  it('sends a scheduled email at its time, announced with email.scheduled', async () => {
    const at = new Date(Date.now() + 2000).toISOString();
    const id = await sendOk({ to: 'delivered@postline.test', scheduledAt: at });
    await eventFor('email.scheduled', id);
    expect((await resend.emails.get(id)).data).toMatchObject({ last_event: 'scheduled' });
    expect(eventsOf(id)).not.toContain('email.sent');
    const sent = await eventFor('email.sent', id);
    expect(Date.parse(sent.envelope.occurred_at)).toBeGreaterThanOrEqual(Date.parse(at) - 50);
    await eventFor('email.delivered', id);
  });

  it('reschedules and cancels, and refuses to cancel an email that is not scheduled', async () => {
    const later = await sendOk({ to: 'delivered@postline.test', scheduledAt: 'in 1 hour' });
    const moved = await resend.emails.update({ id: later, scheduledAt: new Date(Date.now() + 1000).toISOString() });
    expect(moved.data).toEqual({ object: 'email', id: later });
    await eventFor('email.delivered', later);

    const canceledAt = Date.now() + 1500;
    const canceled = await sendOk({ to: 'delivered@postline.test', scheduledAt: new Date(canceledAt).toISOString() });
    expect((await resend.emails.cancel(canceled)).data).toEqual({ object: 'email', id: canceled });
    expect((await resend.emails.get(canceled)).data?.last_event).toBe('canceled');
    // Timers fire in the order of their time: once an email scheduled after the canceled one's time is sent, the
    // canceled one would have been sent before it.
    const after = await sendOk({
      to: 'delivered@postline.test',
      scheduledAt: new Date(canceledAt + 500).toISOString(),
    });
    await eventFor('email.sent', after);
    expect(eventsOf(canceled)).toEqual(['email.scheduled']);
    expect((await resend.emails.cancel(canceled)).error).toMatchObject({ statusCode: 403, name: 'validation_error' });
    expect((await resend.emails.cancel(later)).error).toMatchObject({ statusCode: 403, name: 'validation_error' });
  });

  it('refuses a time more than 30 days ahead', async () => {
    const { error } = await send({ scheduledAt: new Date(Date.now() + 31 * 86_400_000).toISOString() });
    expect(error).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });
});

describe('/suppressions', () => {
  it('adds, lists, gets, removes by hand, and the next send goes through again', async () => {
    const address = `${unique('manual')}@${RCPT}`;
    const created = await call('POST', '/suppressions', { email: address });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    await events.waitFor('suppression.added', (m) => m.routingKey === 'suppression.added' && m.envelope.data.id === id);
    expect((await call('GET', `/suppressions/${address}`)).body).toMatchObject({
      object: 'suppression',
      id,
      email: address,
      origin: 'manual',
      source_id: null,
    });
    const list = await call('GET', '/suppressions?origin=manual');
    expect((list.body as { data: { id: string }[] }).data.map((s) => s.id)).toContain(id);

    const skipped = await sendOk({ to: address });
    await eventFor('email.suppressed', skipped);

    expect((await call('DELETE', `/suppressions/${id}`)).body).toEqual({ object: 'suppression', id, deleted: true });
    await events.waitFor(
      'suppression.removed',
      (m) => m.routingKey === 'suppression.removed' && m.envelope.data.id === id,
    );
    expect((await call('GET', `/suppressions/${id}`)).status).toBe(404);
    const sent = await sendOk({ to: address });
    await eventFor('email.delivered', sent);
  });

  it('keeps an internationalised address as recipients are kept (punycode), so it matches a send to it', async () => {
    const local = unique('idn').toLowerCase();
    const created = await call('POST', '/suppressions', { email: `${local}@Bücher.test` });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    const got = await call('GET', `/suppressions/${encodeURIComponent(`${local}@bücher.test`)}`);
    expect(got.body).toMatchObject({ id, email: `${local}@xn--bcher-kva.test` });
    const skipped = await sendOk({ to: `${local}@bücher.test` });
    await eventFor('email.suppressed', skipped);
  });

  it('adds and removes in batches', async () => {
    const emails = [`${unique('b1')}@${RCPT}`, `${unique('b2')}@${RCPT}`];
    const added = await call('POST', '/suppressions/batch/add', { emails });
    expect(added.status).toBe(201);
    expect((added.body as { data: unknown[] }).data).toHaveLength(2);
    const removed = await call('POST', '/suppressions/batch/remove', {
      emails: [...emails, `${unique('none')}@${RCPT}`],
    });
    expect((removed.body as { data: { deleted: boolean }[] }).data.map((d) => d.deleted)).toEqual([true, true, false]);

    // By id: an id in upper case names the same entry, and one named twice is answered once.
    const again = await call('POST', '/suppressions/batch/add', { emails });
    const ids = (again.body as { data: { id: string }[] }).data.map((d) => d.id);
    const byId = await call('POST', '/suppressions/batch/remove', { ids: [ids[0]!.toUpperCase(), ids[1], ids[1]] });
    expect((byId.body as { data: unknown[] }).data).toEqual([
      { object: 'suppression', id: ids[0], deleted: true },
      { object: 'suppression', id: ids[1], deleted: true },
    ]);
    expect((await call('GET', `/suppressions/${ids[0]}`)).status).toBe(404);
  });
});

describe('a domain that loses verification', () => {
  it('fails its queued emails with a reason', async () => {
    const lost = await verifiedDomain();
    const { data } = await resend.emails.send({
      from: `hello@${lost.domain}`,
      to: 'delivered@postline.test',
      subject: 'later',
      html: '<p>x</p>',
      scheduledAt: 'in 1 hour',
    });
    const id = String(data?.id);
    for (const name of lost.names) dns.remove(name);
    await resend.domains.verify(lost.domainId);
    await events.waitFor(
      'unverified',
      (m) =>
        m.routingKey === 'internal.domain.state' &&
        m.envelope.data.domain_id === lost.domainId &&
        m.envelope.data.sending_verified === false,
    );
    // Its time is moved to now rather than waited for.
    const failed = await nudgeUntil('its time', eventFor('email.failed', id), () =>
      makeTimerDue(db, `email-send:${id}`),
    );
    expect(failed.envelope.data).toMatchObject({ failed: { reason: 'domain_not_verified' } });
  });
});

function teamIdOf(): string {
  const state = events.messages.find(
    (m) => m.routingKey === 'internal.domain.state' && m.envelope.data.domain_id === domainId,
  );
  return String(state?.envelope.team_id);
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'user-agent': 'test' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
