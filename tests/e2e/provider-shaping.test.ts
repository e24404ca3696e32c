// Traffic shaping per mailbox provider through the whole system: a local MX under Gmail's MX host name
// (reached through the local DNS server) that answers `421 4.7.28` under load, beside another provider's
// MX that keeps taking mail. The sender holds Gmail only, says so in its events and metrics, and delivers
// the held mail once the MX recovers, each message once; a deferral by the hold takes no step of the back-off.
// GET /deliverability/providers shows the hold to any team, with the reply that caused it and when it ends.
// A company's own MX that greylists is counted there among the other mail servers, named nowhere, its reply
// by its codes alone.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Resend } from 'resend';
import type { ApiShape } from '@postline/contracts';
import {
  createVerifiedDomain,
  observeBroker,
  sleep,
  startDeliveringSystem,
  startSinkMx,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type ObservedMessage,
  type SinkMx,
  type System,
  testResend,
} from '@postline/testing';

const OTHER = 'shaping-other.example.net';
const GMAIL = 'shaping-gmail.example.net';
const GMAIL_MX = 'gmail-smtp-in.l.google.com';
/** A recipient domain whose company runs its own MX (shaped as `other:acme-legal.test`). */
const COMPANY = 'shaping-company.example.net';
const COMPANY_MX = 'mx.acme-legal.test';
const SCALE = 0.0001;
/** A hold of 4 s in this run (holds are multiplied by POSTLINE_DELAY_SCALE): longer than the steps taken during it. */
const HOLD_MS = 4000 / SCALE;

let system: System;
let dns: DnsServer;
let other: SinkMx;
let gmail: SinkMx;
let company: SinkMx;
let events: BrokerObserver;
let resend: Resend;
/** Another team's key: the shaping view is the install's, the same for every team. */
let readerKey: string;
let from: string;
let pushingBack = true;
let greylisting = true;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'shaping-'));
  const shaping = join(dir, 'shaping.json');
  writeFileSync(shaping, JSON.stringify({ pushback: { holdAfterPushbacks: 2, holdMs: HOLD_MS, maxHoldMs: HOLD_MS } }));
  ({
    dns,
    sink: other,
    system,
  } = await startDeliveringSystem(OTHER, {
    POSTLINE_DELAY_SCALE: String(SCALE),
    SHAPING_CONFIG: shaping,
  }));
  gmail = await startSinkMx({
    host: '127.0.0.71',
    port: other.port,
    mailFrom: () =>
      pushingBack ? { code: 421, message: '4.7.28 Our system has detected an unusual rate of mail' } : undefined,
  });
  dns.set(GMAIL, [{ type: 'MX', exchange: GMAIL_MX, priority: 5 }]);
  dns.set(GMAIL_MX, [{ type: 'A', address: gmail.host }]);
  // Names the sender's address in its reply, as Postfix's greylisting policy servers do.
  company = await startSinkMx({
    host: '127.0.0.72',
    port: other.port,
    mailFrom: (address) =>
      greylisting ? { code: 450, message: `4.7.1 <${address}>: Sender address rejected: Greylisted` } : undefined,
  });
  dns.set(COMPANY, [{ type: 'MX', exchange: COMPANY_MX, priority: 10 }]);
  dns.set(COMPANY_MX, [{ type: 'A', address: company.host }]);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [
      { exchange: 'events', pattern: 'email.*' },
      { exchange: 'events', pattern: 'internal.domain.state' },
      { exchange: 'commands', pattern: 'sender.deliver' },
    ],
  });
  resend = testResend(String((await system.admin('team', 'create', '--name', 'Shaping')).api_key), system.apiUrl);
  readerKey = String((await system.admin('team', 'create', '--name', 'Reader')).api_key);
  const domain = await createVerifiedDomain({ resend, dns, events, name: 'shaping.example.com' });
  from = `Shaping <hello@${domain.name}>`;
}, 120_000);

afterAll(async () => {
  await events?.close();
  await system?.stop();
  await Promise.all([gmail?.close(), company?.close(), other?.close(), dns?.close()]);
}, 60_000);

async function send(to: string): Promise<string> {
  const { data, error } = await resend.emails.send({ from, to, subject: 'Shaped', text: 'hello' });
  if (error || !data) throw new Error(JSON.stringify(error));
  return data.id;
}

const eventFor = (type: string, id: string, extra: (m: ObservedMessage) => boolean = () => true) =>
  events.waitFor(`${type} ${id}`, (m) => m.routingKey === type && m.envelope.data.email_id === id && extra(m), {
    timeoutMs: 30_000,
  });

async function metrics(): Promise<string> {
  return (await fetch(`${system.services.sender.url}/metrics`)).text();
}

/** The value of a metric whose labels include `labels` (`provider="gmail"`), or undefined when none is there. */
const metricValue = (text: string, name: string, ...labels: string[]) => {
  const found = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)));
  return found === undefined ? undefined : Number(found.slice(found.lastIndexOf(' ') + 1));
};
const GMAIL_LABEL = 'provider="gmail"';

/** The shaping view; `paced`: polled, so no faster than the reader team's rate limit (10 a second) allows. */
async function shaping(paced = false): Promise<ApiShape<'ProviderShaping'>> {
  if (paced) await sleep(200);
  const r = await fetch(`${system.apiUrl}/deliverability/providers`, {
    headers: { authorization: `Bearer ${readerKey}` },
  });
  if (r.status !== 200) throw new Error(`GET /deliverability/providers answered ${r.status}: ${await r.text()}`);
  return (await r.json()) as ApiShape<'ProviderShaping'>;
}
const providers = async (paced = false) => (await shaping(paced)).providers;

describe('traffic shaping per mailbox provider', () => {
  it('holds the provider that answers 421 4.7.28, not the others, and delivers its mail once it recovers', async () => {
    // Nothing sent yet: no provider to show.
    expect(await providers()).toEqual([]);

    // The first email meets the 421s, which hold Gmail.
    const first = await send(`first@${GMAIL}`);
    const firstDelay = await eventFor('email.delivery_delayed', first);
    expect(firstDelay.envelope.data).toMatchObject({
      delivery_delayed: { diagnosticCode: [expect.stringContaining('4.7.28')] },
    });
    await waitFor(
      'gmail held on /metrics',
      async () => metricValue(await metrics(), 'smtp_provider_held', GMAIL_LABEL) === 1,
    );
    const text = await metrics();
    expect(metricValue(text, 'smtp_provider_hold_release_timestamp_seconds', GMAIL_LABEL)).toBeGreaterThan(
      Date.now() / 1000 - 1,
    );
    expect(metricValue(text, 'smtp_provider_shaping_events_total', GMAIL_LABEL, 'event="held"')).toBeGreaterThanOrEqual(
      1,
    );
    expect(metricValue(text, 'smtp_provider_rate_per_minute', GMAIL_LABEL)).toBeLessThan(
      metricValue(text, 'smtp_provider_rate_limit_per_minute', GMAIL_LABEL)!,
    );
    // The API shows the hold: why (the provider's reply), until when, and the sender process holding it.
    let gmailShaping: Awaited<ReturnType<typeof providers>>[number] | undefined;
    await waitFor('gmail held on GET /deliverability/providers', async () => {
      gmailShaping = (await providers(true)).find((p) => p.provider === 'gmail');
      return gmailShaping?.state === 'held';
    });
    expect(gmailShaping).toMatchObject({
      provider: 'gmail',
      reason: expect.stringContaining('421 4.7.28'),
      limits: { messages_per_minute: 3000, max_connections: 20, max_messages_per_connection: 100 },
      replicas: [{ state: 'held', sending_ip: expect.stringMatching(/^127\./) }],
    });
    expect(gmailShaping!.rate_per_minute).toBeLessThan(gmailShaping!.limit_per_minute);
    expect(Date.parse(gmailShaping!.held_until!)).toBeGreaterThan(Date.now() - 1000);

    // While held: new mail to Gmail is deferred naming the throttle, without dialling the MX; the other
    // provider's mail goes through.
    const connections = gmail.connections();
    const second = await send(`second@${GMAIL}`);
    const elsewhere = await send(`someone@${OTHER}`);
    const secondDelay = await eventFor('email.delivery_delayed', second);
    expect(secondDelay.envelope.data).toMatchObject({
      delivery_delayed: { message: expect.stringMatching(/mailbox provider \(gmail\) are throttled/) },
    });
    await eventFor('email.delivered', elsewhere);
    expect(gmail.connections()).toBe(connections);

    // Gmail recovers: the held mail is delivered after the hold, each message once.
    pushingBack = false;
    await eventFor('email.delivered', first);
    await eventFor('email.delivered', second);
    const copies = (id: string) => gmail.messages.filter((m) => m.raw.toString().includes(`Message-ID: <${id}@`));
    expect(copies(first)).toHaveLength(1);
    expect(copies(second)).toHaveLength(1);
    // The held email's retry, sent by its timer through the scheduler, counts the attempt as throttled: the
    // back-off does not step for it.
    const retried = events.messages.find(
      (m) => m.routingKey === 'sender.deliver' && m.envelope.data.email_id === second && m.envelope.data.attempt === 2,
    );
    expect(retried?.envelope.data).toMatchObject({ attempt: 2, throttled: 1 });
    expect(other.messages.filter((m) => m.raw.toString().includes(`Message-ID: <${elsewhere}@`))).toHaveLength(1);
    const after = await metrics();
    expect(metricValue(after, 'smtp_provider_held', GMAIL_LABEL)).toBe(0);
    // Released (the view follows within its few seconds): Gmail no longer held; the other provider, at its
    // limits, is not listed.
    let released: Awaited<ReturnType<typeof providers>> = [];
    await waitFor('gmail released on GET /deliverability/providers', async () => {
      released = await providers(true);
      return released[0]?.state !== 'held';
    });
    expect(released.map((p) => [p.provider, p.held_until])).toEqual([['gmail', null]]);
    expect(
      metricValue(after, 'smtp_provider_shaping_events_total', GMAIL_LABEL, 'event="throttled"'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts a company mail server that pushes back, naming neither it nor the address its reply names', async () => {
    const id = await send(`someone@${COMPANY}`);
    // The sending team reads the whole reply in its own email's events.
    const delayed = await eventFor('email.delivery_delayed', id);
    expect(JSON.stringify(delayed.envelope.data)).toContain('Sender address rejected: Greylisted');

    let body: ApiShape<'ProviderShaping'> | undefined;
    await waitFor('the company MX counted on GET /deliverability/providers', async () => {
      body = await shaping(true);
      return body.other_mail_servers.slowed + body.other_mail_servers.held > 0;
    });
    expect(body!.other_mail_servers.reason).toBe('450 4.7.1');
    expect(body!.providers.map((p) => p.provider)).not.toContain('other');
    expect(JSON.stringify(body)).not.toMatch(/acme-legal|shaping-company|@/);

    greylisting = false;
    await eventFor('email.delivered', id);
  });
});
