// A lost dependency is an outage to ride out, never a crash: the whole system runs as separate processes
// with Postgres and RabbitMQ behind TCP proxies this test cuts (every connection reset, new ones refused),
// and through each cut no process exits, readiness says 503, a send is answered 503 within seconds instead
// of hanging, and within 5 s of the cut's end every service is ready again and mail flows.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Resend } from 'resend';
import { SERVICE_NAMES, type ServiceName } from '@postline/contracts';
import {
  createTestDatabase,
  createVerifiedDomain,
  dataOf,
  infraFromEnv,
  observeBroker,
  startDeliveringSystem,
  startTcpProxy,
  waitFor,
  type BrokerObserver,
  type CutMode,
  type DnsServer,
  type SinkMx,
  type System,
  type TcpProxy,
  type TestDatabase,
  testResend,
} from '@postline/testing';

const RCPT = 'outage.test';
/** How long each cut lasts: long enough for every pool, listener and channel to notice and back off. */
const CUT_MS = 8_000;

let database: TestDatabase;
let pgProxy: TcpProxy;
let amqpProxy: TcpProxy;
let system: System;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let resend: Resend;
let apiKey: string;
let from: string;
/** Exits the test did not cause, with the service's last output. */
const exits: string[] = [];

beforeAll(async () => {
  const infra = infraFromEnv();
  database = await createTestDatabase('outage');
  pgProxy = await startTcpProxy(Number(new URL(infra.databaseUrl).port || 5432));
  amqpProxy = await startTcpProxy(Number(new URL(infra.amqpUrl).port || 5672));
  ({ dns, sink, system } = await startDeliveringSystem(RCPT, {
    DATABASE_URL: pgProxy.url(database.url),
    AMQP_URL: amqpProxy.url(infra.amqpUrl),
    RATE_LIMIT_PER_SECOND: '1000',
  }));
  for (const name of SERVICE_NAMES) {
    system.services[name].process.once('exit', (code, signal) => {
      exits.push(`${name} exited (${code ?? signal}):\n${system.services[name].output.slice(-20).join('')}`);
    });
  }
  // The observer reaches RabbitMQ directly: it watches the system, it is not part of it.
  events = await observeBroker({
    amqpUrl: infra.amqpUrl,
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  apiKey = String((await system.admin('team', 'create', '--name', 'Outage')).api_key);
  resend = testResend(apiKey, system.apiUrl);
  const domain = await createVerifiedDomain({ resend, dns, events, name: 'outage.example.com' });
  from = `ops@${domain.name}`;
}, 120_000);

afterAll(async () => {
  await pgProxy?.restore();
  await amqpProxy?.restore();
  await events?.close();
  // Services stop (and their queues are removed) only once the proxies are open again.
  for (const name of SERVICE_NAMES) system?.services[name].process.removeAllListeners('exit');
  await system?.stop();
  await Promise.all([sink?.close(), dns?.close(), pgProxy?.close(), amqpProxy?.close()]);
  await database?.drop();
}, 60_000);

/** A service's /readyz status (0: no answer); throws at once when a process has exited. */
async function readiness(name: ServiceName): Promise<number> {
  if (exits.length > 0) throw new Error(exits.join('\n'));
  try {
    return (await fetch(`${system.services[name].url}/readyz`, { signal: AbortSignal.timeout(3_000) })).status;
  } catch {
    return 0;
  }
}

/** POST /emails as a client would, with how long the answer took. */
async function send(subject: string): Promise<{ status: number; body: { id?: string; name?: string }; ms: number }> {
  const started = Date.now();
  const r = await fetch(`${system.apiUrl}/emails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from, to: `someone@${RCPT}`, subject, text: subject }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: r.status, body: (await r.json()) as { id?: string; name?: string }, ms: Date.now() - started };
}

/**
 * Cuts `proxy` for CUT_MS: during the cut `services` turn unready and a send is answered within 10 s (503
 * when the database is gone; accepted when only the broker is, since the outbox keeps what it causes);
 * after it every service is ready within 5 s, and every email accepted is delivered.
 */
async function rideOut(
  proxy: TcpProxy,
  services: ServiceName[],
  label: string,
  duringCut: 200 | 503,
  mode: CutMode = 'refuse',
): Promise<void> {
  const before = sink.messages.length;
  const cutAt = Date.now();
  await proxy.cut(mode);
  for (const name of services)
    await waitFor(`${name} unready during the ${label} cut`, async () => (await readiness(name)) === 503, 5_000);
  const during = await send(`${label} during the cut`);
  if (duringCut === 503)
    expect({ status: during.status, name: during.body.name }).toEqual({ status: 503, name: 'service_unavailable' });
  else expect(during.status).toBe(200);
  expect(during.ms).toBeLessThan(10_000);
  await waitFor(`the ${label} cut to last ${CUT_MS} ms`, () => Date.now() - cutAt >= CUT_MS, CUT_MS + 1_000);

  await proxy.restore();
  const restoredAt = Date.now();
  for (const name of SERVICE_NAMES)
    await waitFor(`${name} ready after the ${label} cut`, async () => (await readiness(name)) === 200, 5_000);
  expect(Date.now() - restoredAt).toBeLessThan(5_000);

  const accepted = await send(`${label} after the cut`);
  expect(accepted.status).toBe(200);
  const subjects =
    duringCut === 200 ? [`${label} during the cut`, `${label} after the cut`] : [`${label} after the cut`];
  for (const subject of subjects) {
    await waitFor(
      `"${subject}" to be delivered`,
      () => sink.messages.slice(before).some((m) => m.raw.toString('latin1').includes(`Subject: ${subject}`)),
      20_000,
    );
  }
  expect(exits).toEqual([]);
}

describe('riding out a lost dependency', () => {
  it('delivers before any cut', async () => {
    dataOf(await resend.emails.send({ from, to: `first@${RCPT}`, subject: 'before the cuts', text: 'x' }));
    await waitFor('the first email delivered', () => sink.messages.some((m) => m.to.includes(`first@${RCPT}`)), 20_000);
  });

  it('rides out a Postgres cut: no exit, 503 while it lasts, ready within 5 s after, mail flows', async () => {
    await rideOut(pgProxy, ['api-gateway', 'sender'], 'postgres', 503);
  }, 60_000);

  it('rides out a Postgres partition (connections accepted, never answered): 503 within 10 s, not a hang', async () => {
    await rideOut(pgProxy, ['api-gateway', 'sender'], 'partition', 503, 'blackhole');
  }, 60_000);

  it('rides out a RabbitMQ cut: no exit, unready while it lasts, accepts, ready within 5 s after, mail flows', async () => {
    await rideOut(amqpProxy, ['sender'], 'rabbitmq', 200);
  }, 60_000);
});
