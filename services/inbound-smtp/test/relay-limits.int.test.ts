// The relay's own limits and failure answers, on relay servers started in this process with small limits
// (so that they are reached in a test) in front of the real system's gateway: the message size, the
// recipients, sessions per client, the AUTH lockout, an unreachable gateway (a real refused connection),
// and a graceful stop with a message in flight.
import net from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import nodemailer from 'nodemailer';
import { createLogger, createMetrics } from '@postline/platform';
import {
  createVerifiedDomain,
  freePort,
  observeBroker,
  waitFor,
  type DnsServer,
  testResend,
  useSystem,
  type SharedSystem,
} from '@postline/testing';
import { createInboundMetrics, type InboundMetrics } from '../src/metrics.ts';
import { createRelayGateway, type RelayGateway } from '../src/gateway/relay-gateway.ts';
import { createRelayServers, type RelayLimits } from '../src/smtp/relay-server.ts';
import { selfSignedCertificate } from '../src/tls/tls.ts';

jest.setTimeout(60_000);

let system: SharedSystem;
let dns: DnsServer;
let apiKey: string;
let domain: string;
const tls = { ...selfSignedCertificate('relay.postline.test', new Date()), selfSigned: true };
const logger = createLogger({ service: 'inbound-smtp-test', level: 'silent' });

const world = useSystem();

beforeAll(async () => {
  ({ system, dns } = world);
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  try {
    apiKey = String((await system.admin('team', 'create', '--name', 'Relay limits')).api_key);
    const resend = testResend(apiKey, system.apiUrl);
    domain = (await createVerifiedDomain({ resend, dns, events, name: `limits${Date.now().toString(36)}.example.com` }))
      .name;
  } finally {
    await events.close();
  }
}, 120_000);

afterAll(async () => {
  for (const relay of started) await relay.stop();
}, 30_000);

type Relay = {
  starttls: number;
  implicitTls: number;
  metrics: InboundMetrics;
  /** Calls the relay made to the gateway, by kind. */
  calls: { checkCredentials: number; submit: number };
  stop: () => Promise<void>;
};
const started: Relay[] = [];

/** A relay with `limits` in front of `gateway` (the system's gateway by default), counting its calls. */
async function startRelay(
  limits: Partial<RelayLimits>,
  gateway: RelayGateway = createRelayGateway({ baseUrl: system.apiUrl }),
): Promise<Relay> {
  const calls = { checkCredentials: 0, submit: 0 };
  const counted: RelayGateway = {
    checkCredentials: (key) => (calls.checkCredentials++, gateway.checkCredentials(key)),
    submit: (submission) => (calls.submit++, gateway.submit(submission)),
    close: () => gateway.close(),
  };
  const metrics = createInboundMetrics(createMetrics('inbound-smtp-test').registry);
  const ports = { starttls: await freePort(), implicitTls: await freePort() };
  const servers = createRelayServers({
    ports,
    hostName: 'relay.postline.test',
    tls,
    gateway: counted,
    metrics,
    logger,
    limits,
  });
  await servers.start();
  let stopped: Promise<void> | undefined;
  const relay: Relay = { ...ports, metrics, calls, stop: () => (stopped ??= servers.stop()) };
  started.push(relay);
  return relay;
}

function client(relay: Relay, options: { pass?: string; pool?: boolean } = {}) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: relay.implicitTls,
    secure: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'postline', pass: options.pass ?? apiKey },
    ...(options.pool ? { pool: true, maxConnections: 1 } : {}),
  });
}

type SmtpError = { responseCode?: number; response?: string; command?: string; code?: string };

async function refusal(promise: Promise<unknown>): Promise<SmtpError> {
  try {
    await promise;
  } catch (err) {
    return err as SmtpError;
  }
  throw new Error('expected a refusal');
}

/** A raw session (implicit TLS when `secure`): everything the server says, as it arrives. */
async function openSession(
  port: number,
  secure = false,
): Promise<{ said: () => string; write: (line: string) => void; closed: () => boolean; destroy: () => void }> {
  const socket = secure
    ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false })
    : net.connect({ host: '127.0.0.1', port });
  let text = '';
  let closed = false;
  socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  await waitFor('the greeting', () => /\r\n$/.test(text));
  return {
    said: () => text,
    write: (line) => socket.write(`${line}\r\n`),
    closed: () => closed,
    destroy: () => socket.destroy(),
  };
}

const counter =
  (metric: { get: () => Promise<{ values: { value: number; labels: Record<string, unknown> }[] }> }) =>
  async (labels: Record<string, string> = {}) =>
    (await metric.get()).values
      .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
      .reduce((sum, v) => sum + v.value, 0);

describe('relay limits', () => {
  it('announces SIZE and refuses a larger message with 552 5.3.4 without submitting it', async () => {
    const relay = await startRelay({ maxMessageBytes: 2000 });
    const session = await openSession(relay.starttls);
    session.write('EHLO client.test');
    await waitFor('the EHLO reply', () => /^250 /m.test(session.said().split('\r\n').slice(1).join('\r\n')));
    expect(session.said()).toMatch(/^250[- ]SIZE 2000\r$/m);
    session.destroy();

    const refused = await refusal(
      client(relay).sendMail({
        from: `hello@${domain}`,
        to: 'delivered@postline.test',
        subject: 'big',
        text: 'x'.repeat(5000),
      }),
    );
    expect(refused.response).toBe('552 5.3.4 Message exceeds the maximum size of 2000 bytes');
    expect(relay.calls.submit).toBe(0);
    expect(await counter(relay.metrics.messages)({ listener: 'relay', outcome: 'rejected' })).toBe(1);
  });

  it('refuses recipients past the limit with 452 4.5.3 and sends to the others', async () => {
    const relay = await startRelay({ maxRecipients: 3 });
    const to = [
      'delivered+1@postline.test',
      'delivered+2@postline.test',
      'delivered+3@postline.test',
      'delivered+4@postline.test',
    ];
    const info = await client(relay).sendMail({ from: `hello@${domain}`, to, subject: 'many', text: 'x' });
    expect(info.accepted).toEqual(to.slice(0, 3));
    expect(info.rejected).toEqual([to[3]]);
    expect((info.rejectedErrors?.[0] as SmtpError | undefined)?.response).toBe(
      '452 4.5.3 Too many recipients (at most 3 per message)',
    );
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
  });

  it('refuses a client past its sessions at once with 421 4.7.0, and takes it again once one closes', async () => {
    const relay = await startRelay({ maxSessionsPerIp: 2 });
    const first = await openSession(relay.starttls);
    // Both ports count together.
    const second = await openSession(relay.implicitTls, true);
    const third = await openSession(relay.starttls);
    expect(first.said()).toMatch(/^220 /);
    expect(second.said()).toMatch(/^220 /);
    expect(third.said()).toMatch(/^421 4\.7\.0 Too many connections from 127\.0\.0\.1 \(at most 2 at once\)/);
    expect(await counter(relay.metrics.sessions)({ listener: 'relay' })).toBe(2);
    first.destroy();
    await waitFor(
      'the first session to be counted out',
      async () => (await counter(relay.metrics.sessions)({ listener: 'relay' })) === 1,
    );
    const fourth = await openSession(relay.starttls);
    expect(fourth.said()).toMatch(/^220 /);
    for (const session of [second, third, fourth]) session.destroy();
  });

  it('locks a client out after too many failed AUTHs (421 4.7.0), even with a good key, without asking the gateway', async () => {
    const relay = await startRelay({ maxAuthFailures: 3, authLockoutMs: 60_000 });
    for (let i = 0; i < 3; i++) {
      expect((await refusal(client(relay, { pass: `pl_wrong_${i}` }).verify())).response).toBe(
        '535 5.7.8 Authentication credentials invalid',
      );
    }
    const checks = relay.calls.checkCredentials;
    const locked = await refusal(client(relay).verify());
    expect(locked.response).toBe('421 4.7.0 Too many failed authentication attempts from 127.0.0.1, try again later');
    expect(relay.calls.checkCredentials).toBe(checks);
    expect(await counter(relay.metrics.authFailures)()).toBe(4);
  });
});

describe('an unreachable gateway', () => {
  it('answers 454 4.7.0 at AUTH and 451 4.3.0 at DATA: temporary, the client keeps its message', async () => {
    const closedPort = await freePort();
    const unreachable = createRelayGateway({ baseUrl: `http://127.0.0.1:${closedPort}` });
    const atAuth = await startRelay({}, unreachable);
    expect((await refusal(client(atAuth).verify())).response).toBe(
      '454 4.7.0 Temporary authentication failure, try again later',
    );

    // AUTH through the real gateway, the submission to the closed port.
    const real = createRelayGateway({ baseUrl: system.apiUrl });
    const atData = await startRelay(
      {},
      { checkCredentials: real.checkCredentials, submit: unreachable.submit, close: () => real.close() },
    );
    const refused = await refusal(
      client(atData).sendMail({ from: `hello@${domain}`, to: 'delivered@postline.test', subject: 'x', text: 'x' }),
    );
    expect(refused).toMatchObject({ responseCode: 451, command: 'DATA' });
    expect(refused.response).toMatch(/^451 4\.3\.0 /);
    expect(await counter(atData.metrics.messages)({ listener: 'relay', outcome: 'deferred' })).toBe(1);
  });
});

describe('stop', () => {
  it('refuses new sessions, ends idle ones with 421, and answers the message in flight before closing', async () => {
    const real = createRelayGateway({ baseUrl: system.apiUrl });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inFlight = false;
    const relay = await startRelay(
      { closeTimeoutMs: 20_000 },
      {
        checkCredentials: real.checkCredentials,
        // The submission waits until the test lets it go, so that it is in flight while the relay stops.
        submit: async (submission) => {
          inFlight = true;
          await held;
          return real.submit(submission);
        },
        close: () => real.close(),
      },
    );
    const idle = await openSession(relay.starttls);
    const sending = client(relay).sendMail({
      from: `hello@${domain}`,
      to: 'delivered@postline.test',
      subject: 'in flight',
      text: 'x',
    });
    await waitFor('the message to be in flight', () => inFlight);

    const stopping = relay.stop();
    await waitFor('the idle session to be told and closed', () => idle.closed());
    expect(idle.said()).toMatch(/\r\n421 4\.3\.2 Service shutting down, try again later\r\n$/);
    expect(String((await refusal(client(relay).verify())) as unknown)).toMatch(/ECONNREFUSED/);

    release();
    const info = await sending;
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
    await stopping;
  });
});
