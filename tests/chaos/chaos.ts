// The chaos run: the six services as separate processes, Postgres, RabbitMQ and Redis behind TCP proxies the
// run can cut, a local MX and a webhook receiver, a mixed stream of mail (singles, batches of up to 100,
// scheduled sends, every request with an idempotency key and retried by its client until answered), and
// faults in turn: SIGKILL of each service with a restart, SIGTERM during load, a broker cut, a Postgres cut,
// a Redis cut and a whole-system restart. After quiescence it reports what an operator would check: every
// accepted email final, every recipient reached, every event at the endpoint, no process exited that the
// run did not stop, the slowest answer, each service's readiness after each fault, every queue empty, and
// the duplicates at the MX and at the webhook receiver with the fault each one came from.
//
// This file starts and stops the harness and runs the parts in turn: the load (chaos-load.ts), the faults
// (chaos-faults.ts), then quiescence and the report (chaos-report.ts).
import pg from 'pg';
import {
  createTestDatabase,
  createVerifiedDomain,
  dataOf,
  infraFromEnv,
  observeBroker,
  sleep,
  startDeliveringSystem,
  startTcpProxy,
  startWebhookReceiver,
  type DnsServer,
  type SinkMx,
  type System,
  type TcpProxy,
  type TestDatabase,
  type WebhookReceiver,
  testResend,
} from '@postline/testing';
import { ALL_FAULTS, createFaultSchedule, type FaultName } from './chaos-faults.ts';
import { RCPT, startStream } from './chaos-load.ts';
import { quiesceAndReport, type ChaosReport } from './chaos-report.ts';

export { ALL_FAULTS, type FaultName, type FaultRecord } from './chaos-faults.ts';
export { describeReport, type ChaosReport, type Duplicate } from './chaos-report.ts';

export type ChaosOptions = {
  /** Emails per second the stream offers (a batch counts its emails). */
  rate: number;
  /** How long a dependency cut lasts. */
  cutMs: number;
  /** Load before the first fault, between faults, and after the last. */
  settleMs: number;
  /** How long the client waits for one answer before it gives up on that try and tries again. */
  answerTimeoutMs: number;
  /** Which faults run, in order (all of them unless named). */
  faults?: FaultName[];
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
};

const DOMAIN = 'chaos.example.com';

type Harness = {
  system: System;
  dns: DnsServer;
  sink: SinkMx;
  hooks: WebhookReceiver;
  database: TestDatabase;
  proxies: Record<'postgres' | 'rabbitmq' | 'redis', TcpProxy>;
  apiKey: string;
  from: string;
  direct: pg.Pool;
};

async function startHarness(): Promise<Harness> {
  const infra = infraFromEnv();
  // What is started so far, undone in reverse if a later step fails.
  const undo: (() => Promise<unknown>)[] = [];
  try {
    return await startHarnessSteps(infra, undo);
  } catch (err) {
    for (const step of undo.reverse()) await step().catch(() => undefined);
    throw err;
  }
}

async function startHarnessSteps(
  infra: ReturnType<typeof infraFromEnv>,
  undo: (() => Promise<unknown>)[],
): Promise<Harness> {
  const database = await createTestDatabase('chaos');
  undo.push(() => database.drop());
  const proxies = {
    postgres: await startTcpProxy(Number(new URL(infra.databaseUrl).port || 5432)),
    rabbitmq: await startTcpProxy(Number(new URL(infra.amqpUrl).port || 5672)),
    redis: await startTcpProxy(Number(new URL(infra.redisUrl).port || 6379)),
  };
  undo.push(() => Promise.all(Object.values(proxies).map((proxy) => proxy.close())));
  const { dns, sink, system } = await startDeliveringSystem(RCPT, {
    DATABASE_URL: proxies.postgres.url(database.url),
    AMQP_URL: proxies.rabbitmq.url(infra.amqpUrl),
    REDIS_URL: proxies.redis.url(infra.redisUrl),
    RATE_LIMIT_PER_SECOND: '100000',
    POSTLINE_DELAY_SCALE: '0.01',
    LOG_LEVEL: 'error',
  });
  undo.push(
    () => Promise.all([sink.close(), dns.close()]),
    () => system.stop(),
  );
  const events = await observeBroker({
    amqpUrl: infra.amqpUrl,
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  undo.push(() => events.close());
  const apiKey = String((await system.admin('team', 'create', '--name', 'Chaos')).api_key);
  const resend = testResend(apiKey, system.apiUrl);
  const domain = await createVerifiedDomain({ resend, dns, events, name: DOMAIN });
  await events.close();
  const hooks = await startWebhookReceiver();
  undo.push(() => hooks.close());
  dataOf(
    await resend.webhooks.create({
      endpoint: `${hooks.url}/chaos`,
      events: ['email.sent', 'email.delivered', 'email.scheduled'],
    }),
  );
  const direct = new pg.Pool({ connectionString: database.url, max: 2 });
  return { system, dns, sink, hooks, database, proxies, apiKey, from: `Chaos <ops@${domain.name}>`, direct };
}

/** Stops everything, each step whatever became of the one before (the first failure is thrown at the end). */
async function stopHarness(h: Harness): Promise<void> {
  const steps = [
    () => Promise.all(Object.values(h.proxies).map((proxy) => proxy.restore())),
    () => h.direct.end(),
    // Services stop (and their queues are removed) only once the proxies are open again.
    () => h.system.stop(),
    () =>
      Promise.all([h.sink.close(), h.dns.close(), h.hooks.close(), ...Object.values(h.proxies).map((p) => p.close())]),
    () => h.database.drop(),
  ];
  const failures: unknown[] = [];
  for (const step of steps) await step().catch((err: unknown) => failures.push(err));
  if (failures.length > 0) throw failures[0];
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[chaos] ${line}\n`));
  const faultNames = options.faults ?? ALL_FAULTS;
  const h = await startHarness();
  try {
    return await runFaults(h, options, faultNames, log);
  } finally {
    await stopHarness(h);
  }
}

async function runFaults(
  h: Harness,
  options: ChaosOptions,
  faultNames: FaultName[],
  log: (line: string) => void,
): Promise<ChaosReport> {
  const schedule = createFaultSchedule(h, options, log);
  const started = Date.now();
  const stream = startStream(h, options.rate, options.answerTimeoutMs, log);
  let failed = true;
  try {
    await sleep(options.settleMs);
    await schedule.run(faultNames);
    failed = false;
  } finally {
    await stream.stop(failed);
  }
  log(
    `stream stopped: ${stream.stats.accepted} emails accepted in ${stream.stats.requests} requests (${stream.stats.retries} retries)`,
  );

  const report = await quiesceAndReport(h, {
    sent: [...stream.sent.values()].filter((s) => s.id !== undefined),
    stats: stream.stats,
    faults: schedule.faults,
    unexpectedExits: schedule.unexpectedExits,
    seconds: (Date.now() - started) / 1000,
    inFlightAtSenderKills: schedule.inFlightAtSenderKills(),
    log,
  });
  await schedule.readRetaken();
  return { ...report, retakenDeliveries: schedule.retakenDeliveries() };
}
