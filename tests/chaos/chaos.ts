// The chaos run: the six services as separate processes, Postgres, RabbitMQ and Redis behind TCP proxies the
// run can cut, a local MX and a webhook receiver, a mixed stream of mail (singles, batches of up to 100,
// scheduled sends, every request with an idempotency key and retried by its client until answered), and
// faults in turn: SIGKILL of each service with a restart, SIGTERM during load, a broker cut, a Postgres cut,
// a Redis cut and a whole-system restart. After quiescence it reports what an operator would check: every
// accepted email final, every recipient reached, every event at the endpoint, no process exited that the
// run did not stop, the slowest answer, each service's readiness after each fault, every queue empty, and
// the duplicates at the MX and at the webhook receiver with the fault each one came from.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { SERVICE_NAMES, type ServiceName } from '@postline/contracts';
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
  waitFor,
  type DnsServer,
  type SinkMessage,
  type SinkMx,
  type System,
  type TcpProxy,
  type TestDatabase,
  type WebhookReceiver,
  testResend,
} from '@postline/testing';

export type ChaosOptions = {
  /** Emails per second the stream offers (a batch counts its emails). */
  rate: number;
  /** How long a dependency cut lasts. */
  cutMs: number;
  /** Load before the first fault, between faults, and after the last. */
  settleMs: number;
  /** Which faults run, in order (all of them unless named). */
  faults?: FaultName[];
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
};

export type FaultName =
  | `kill ${ServiceName}`
  | `term ${ServiceName}`
  | 'cut rabbitmq'
  | 'cut postgres'
  | 'cut redis'
  | 'restart all';

/** Every fault the run knows, in the order it runs them. */
export const ALL_FAULTS: FaultName[] = [
  ...SERVICE_NAMES.map((name) => `kill ${name}` as const),
  'term sender',
  'term api-gateway',
  'cut rabbitmq',
  'cut postgres',
  'cut redis',
  'restart all',
];

export type FaultRecord = {
  name: FaultName;
  startedAt: number;
  endedAt: number;
  /** From the fault's end until every service answered /readyz 200. */
  readyAfterMs: number;
};

/** A message or webhook received more than once: how many copies, the gap between the first two, its fault. */
export type Duplicate = { what: string; copies: number; gapMs: number; cause: string };

export type ChaosReport = {
  seconds: number;
  requests: number;
  /** Tries past the first: the client's retries with the same idempotency key. */
  retries: number;
  accepted: number;
  /** Requests given up after two minutes of retries (none expected). */
  abandoned: number;
  /** Answers that were neither accepted nor worth a retry (a client error: none expected). */
  refused: string[];
  slowestAnswerMs: number;
  faults: FaultRecord[];
  unexpectedExits: string[];
  /** Accepted emails with a recipient still pending or deferred after quiescence. */
  notFinal: string[];
  /** Accepted (email, recipient) pairs the MX never got. */
  notDelivered: string[];
  /** Accepted emails' events the endpoint never got. */
  eventsMissing: string[];
  /** Queues holding messages after quiescence, from the services' /metrics. */
  queuesNotEmpty: string[];
  mxDuplicates: Duplicate[];
  /**
   * SMTP transactions at the MX beyond one per email (each email's recipients share one domain, so one
   * transaction): what a retaken attempt may repeat, whatever its number of recipients.
   */
  mxExtraTransactions: number;
  webhookDuplicates: Duplicate[];
  /** Events emitted more than once (two webhook ids for one email's event type). */
  doubleEvents: Duplicate[];
  /** Emails the client sent once (one idempotency key, however many tries) that were accepted more than once. */
  acceptedTwice: string[];
  /** Deliveries (SMTP transactions to the MX) in flight when each `kill sender` struck, by the sender's gauge. */
  inFlightAtSenderKills: number;
  /**
   * Attempts made again after the process holding their claim died mid-attempt (smtp_deliveries_retaken_total,
   * summed over every sender process of the run): the bound on MX duplicates.
   */
  retakenDeliveries: number;
};

const RCPT = 'chaos-rcpt.test';
const DOMAIN = 'chaos.example.com';
/** The client's give-up: past it a request counts as abandoned. */
const CLIENT_PATIENCE_MS = 120_000;
/** How long a client waits for one answer before it gives up on that try (and counts it as too slow). */
const ANSWER_TIMEOUT_MS = 15_000;

type Sent = { token: string; recipients: string[]; scheduled: boolean; id?: string };

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
  const apiKey = String(system.admin('team', 'create', '--name', 'Chaos').api_key);
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

/** A service's /readyz status; 0 when it does not answer. */
async function readiness(system: System, name: ServiceName): Promise<number> {
  try {
    return (await fetch(`${system.services[name].url}/readyz`, { signal: AbortSignal.timeout(2_000) })).status;
  } catch {
    return 0;
  }
}

/** Milliseconds from now until every service answers /readyz 200 (polled). */
async function untilAllReady(system: System, timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  await waitFor(
    'every service ready',
    async () =>
      (await Promise.all(SERVICE_NAMES.map((name) => readiness(system, name)))).every((status) => status === 200),
    timeoutMs,
  );
  return Date.now() - started;
}

/** A numeric sample of a service's /metrics (summed over label sets that match `labels`), 0 when absent. */
async function metricSum(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return sum;
}

/**
 * The client side: a stream of requests at `rate` emails per second until `stopped()`, each retried with
 * its idempotency key on a 429, a 5xx or no answer, as a well-behaved client does.
 */
function startStream(h: Harness, rate: number, log: (line: string) => void) {
  const sent = new Map<string, Sent>();
  const stats = { requests: 0, retries: 0, accepted: 0, abandoned: 0, refused: [] as string[], slowestAnswerMs: 0 };
  let stopped = false;
  // The run failed: requests in flight give up at their next retry instead of waiting out their patience.
  let abandoned = false;
  const inFlight = new Set<Promise<void>>();

  const email = (scheduled: boolean) => {
    const token = randomUUID();
    const recipients = Array.from(
      { length: Math.random() < 0.2 ? 2 : 1 },
      (_, i) => `r${i}-${token.slice(0, 8)}@${RCPT}`,
    );
    const item: Sent = { token, recipients, scheduled };
    sent.set(token, item);
    const body: Record<string, unknown> = {
      from: h.from,
      to: recipients,
      subject: `chaos ${token}`,
      text: `chaos ${token}`,
    };
    if (scheduled) body.scheduled_at = new Date(Date.now() + 3_000 + Math.random() * 5_000).toISOString();
    return { item, body };
  };

  async function submit(path: '/emails' | '/emails/batch', items: Sent[], body: unknown): Promise<void> {
    const key = randomUUID();
    const firstTry = Date.now();
    stats.requests++;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) stats.retries++;
      const started = Date.now();
      let status = 0;
      let answer: unknown;
      try {
        const r = await fetch(`${h.system.apiUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
        });
        status = r.status;
        answer = await r.json().catch(() => undefined);
      } catch {
        // no answer: a refused connection (a process restarting) or the timeout
      }
      const took = Date.now() - started;
      stats.slowestAnswerMs = Math.max(stats.slowestAnswerMs, took);
      if (status === 200) {
        const ids =
          path === '/emails'
            ? [(answer as { id: string }).id]
            : (answer as { data: { id: string }[] }).data.map((d) => d.id);
        items.forEach((item, i) => (item.id = ids[i]));
        stats.accepted += items.length;
        return;
      }
      // 409: the same key's first request is still in flight; 429 and 5xx: try again later.
      if (status !== 0 && status !== 409 && status !== 429 && status < 500) {
        stats.refused.push(`${path} answered ${status}: ${JSON.stringify(answer)}`);
        for (const item of items) sent.delete(item.token);
        return;
      }
      if (abandoned || Date.now() - firstTry > CLIENT_PATIENCE_MS) {
        stats.abandoned++;
        for (const item of items) sent.delete(item.token);
        log(`abandoned a request to ${path} after ${attempt + 1} tries (last status ${status})`);
        return;
      }
      await sleep(Math.min(250 * 2 ** attempt, 2_000));
    }
  }

  const loop = (async () => {
    let budget = 0;
    let last = Date.now();
    while (!stopped) {
      const now = Date.now();
      budget += ((now - last) / 1000) * rate;
      last = now;
      while (budget >= 1) {
        const roll = Math.random();
        let job: Promise<void>;
        if (roll < 0.05) {
          // A batch of 2 to 100 (one in ten is a full 100).
          const size = Math.random() < 0.1 ? 100 : 2 + Math.floor(Math.random() * 19);
          const emails = Array.from({ length: size }, () => email(false));
          job = submit(
            '/emails/batch',
            emails.map((e) => e.item),
            emails.map((e) => e.body),
          );
          budget -= size;
        } else {
          const one = email(roll < 0.15);
          job = submit('/emails', [one.item], one.body);
          budget -= 1;
        }
        inFlight.add(job);
        void job.finally(() => inFlight.delete(job));
      }
      await sleep(20);
    }
  })();

  return {
    sent,
    stats,
    async stop(abandon = false) {
      stopped = true;
      abandoned = abandon;
      await loop;
      await Promise.all([...inFlight]);
    },
  };
}

/**
 * The fault a duplicate came from: the one whose window (its start until every service was ready again)
 * overlaps the span from a second before the first copy to the second copy. None: it happened under load
 * alone.
 */
function causeOf(ats: number[], faults: FaultRecord[]): string {
  const from = (ats[0] as number) - 1_000;
  const to = ats[1] as number;
  const fault = faults.find((f) => from <= f.endedAt + f.readyAfterMs && to >= f.startedAt);
  return fault ? fault.name : 'no fault';
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
  const unexpectedExits: string[] = [];
  const expected = new Set<ChildProcessLike>();
  const watch = (name: ServiceName) => {
    const service = h.system.services[name];
    const child = service.process;
    child.once('exit', (code, signal) => {
      if (expected.has(child)) return;
      unexpectedExits.push(`${name} exited (${code ?? signal}): ${service.output.slice(-10).join('').slice(-2_000)}`);
    });
  };
  for (const name of SERVICE_NAMES) watch(name);
  const started = Date.now();
  const faults: FaultRecord[] = [];
  let inFlightAtSenderKills = 0;
  // The sender's counter of retaken attempts, read before each fault that ends its process and at the end.
  let retakenDeliveries = 0;
  const readRetaken = async () =>
    (retakenDeliveries += await metricSum(h.system.services.sender.url, 'smtp_deliveries_retaken_total').catch(
      () => 0,
    ));

  const stream = startStream(h, options.rate, log);
  let failed = true;
  try {
    await sleep(options.settleMs);
    for (const name of faultNames) {
      const startedAt = Date.now();
      log(`${name}`);
      const [kind, target] = name.split(' ') as [string, string];
      if (kind === 'kill' || kind === 'term') {
        const service = target as ServiceName;
        if (service === 'sender') {
          if (kind === 'kill')
            inFlightAtSenderKills += await metricSum(h.system.services.sender.url, 'smtp_deliveries_in_flight').catch(
              () => 0,
            );
          await readRetaken();
        }
        expected.add(h.system.services[service].process);
        if (kind === 'kill') await h.system.kill(service);
        else await h.system.terminate(service);
        // A moment down, as a crashed pod waits for its restart.
        await sleep(500);
        const endedAt = Date.now();
        await h.system.restart(service);
        watch(service);
        faults.push({ name, startedAt, endedAt, readyAfterMs: Date.now() - endedAt + (await untilAllReady(h.system)) });
      } else if (kind === 'cut') {
        const proxy = h.proxies[target as keyof Harness['proxies']];
        await proxy.cut();
        await sleep(options.cutMs);
        await proxy.restore();
        const endedAt = Date.now();
        faults.push({ name, startedAt, endedAt, readyAfterMs: await untilAllReady(h.system) });
      } else {
        // The whole system: every service stopped gracefully, then started again.
        await readRetaken();
        for (const service of SERVICE_NAMES) expected.add(h.system.services[service].process);
        await Promise.all(SERVICE_NAMES.map((service) => h.system.terminate(service)));
        const endedAt = Date.now();
        await Promise.all(SERVICE_NAMES.map((service) => h.system.restart(service)));
        for (const service of SERVICE_NAMES) watch(service);
        faults.push({ name, startedAt, endedAt, readyAfterMs: Date.now() - endedAt + (await untilAllReady(h.system)) });
      }
      log(`${name}: every service ready ${faults.at(-1)!.readyAfterMs} ms after its end`);
      await sleep(options.settleMs);
    }
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
    faults,
    unexpectedExits,
    seconds: (Date.now() - started) / 1000,
    inFlightAtSenderKills,
    log,
  });
  await readRetaken();
  return { ...report, retakenDeliveries };
}

type ChildProcessLike = System['services'][ServiceName]['process'];

async function quiesceAndReport(
  h: Harness,
  run: {
    sent: Sent[];
    stats: ReturnType<typeof startStream>['stats'];
    faults: FaultRecord[];
    unexpectedExits: string[];
    seconds: number;
    inFlightAtSenderKills: number;
    log: (line: string) => void;
  },
): Promise<Omit<ChaosReport, 'retakenDeliveries'>> {
  const ids = run.sent.map((s) => s.id as string);
  const notFinalNow = async () => {
    const { rows } = await h.direct.query<{ email_id: string }>(
      `select distinct email_id::text from sender.recipients where email_id = any($1::uuid[]) and status in ('pending', 'deferred')`,
      [ids],
    );
    return rows.map((r) => r.email_id);
  };
  // Quiescence: recipients final, every copy at the MX and every event at the endpoint, queues drained.
  const deliveredPairs = () => {
    const pairs = new Map<string, number[]>();
    for (const message of h.sink.messages) {
      const token = tokenOf(message);
      if (!token) continue;
      for (const rcpt of message.to) {
        const key = `${token} ${rcpt}`;
        pairs.set(key, [...(pairs.get(key) ?? []), message.at]);
      }
    }
    return pairs;
  };
  const expectedEvents = () => {
    const wanted = new Set<string>();
    for (const s of run.sent) {
      wanted.add(`${s.id} email.sent`);
      wanted.add(`${s.id} email.delivered`);
      if (s.scheduled) wanted.add(`${s.id} email.scheduled`);
    }
    return wanted;
  };
  const seenEvents = () => new Set(h.hooks.deliveries.map((d) => `${String(d.json.data.email_id)} ${d.json.type}`));
  const queuesNotEmpty = async () => {
    const full: string[] = [];
    for (const service of SERVICE_NAMES) {
      const text = await (
        await fetch(`${h.system.services[service].url}/metrics`, { signal: AbortSignal.timeout(5_000) })
      ).text();
      for (const line of text.split('\n')) {
        if (!line.startsWith('broker_queue_messages{')) continue;
        if (Number(line.slice(line.lastIndexOf(' ') + 1)) > 0) full.push(`${service}: ${line}`);
      }
    }
    return full;
  };
  const missing = () => {
    const pairs = deliveredPairs();
    const notDelivered = run.sent.flatMap((s) =>
      s.recipients.filter((r) => !pairs.has(`${s.token} ${r}`)).map((r) => `${s.id} ${r}`),
    );
    const seen = seenEvents();
    const eventsMissing = [...expectedEvents()].filter((e) => !seen.has(e));
    return { notDelivered, eventsMissing };
  };
  const quiet = Date.now();
  await waitFor(
    'quiescence',
    async () => {
      const { notDelivered, eventsMissing } = missing();
      return (
        notDelivered.length === 0 &&
        eventsMissing.length === 0 &&
        (await notFinalNow()).length === 0 &&
        (await queuesNotEmpty()).length === 0
      );
    },
    180_000,
  ).catch(() => run.log('no quiescence within 180 s; reporting what is left'));
  run.log(`quiescent ${Date.now() - quiet} ms after the stream stopped`);

  const { notDelivered, eventsMissing } = missing();
  const mxDuplicates: Duplicate[] = [];
  for (const [pair, ats] of deliveredPairs()) {
    if (ats.length > 1)
      mxDuplicates.push({
        what: pair,
        copies: ats.length,
        gapMs: (ats[1] as number) - (ats[0] as number),
        cause: causeOf(ats, run.faults),
      });
  }
  const transactionsOf = new Map<string, number>();
  for (const message of h.sink.messages) {
    const token = tokenOf(message);
    if (token) transactionsOf.set(token, (transactionsOf.get(token) ?? 0) + 1);
  }
  const mxExtraTransactions = [...transactionsOf.values()].reduce((sum, n) => sum + n - 1, 0);
  const byWebhookId = new Map<string, number[]>();
  const byEvent = new Map<string, Set<string>>();
  for (const d of h.hooks.deliveries) {
    const id = d.headers['webhook-id'] ?? '';
    byWebhookId.set(id, [...(byWebhookId.get(id) ?? []), d.at]);
    const event = `${String(d.json.data.email_id)} ${d.json.type}`;
    byEvent.set(event, (byEvent.get(event) ?? new Set()).add(id));
  }
  const webhookDuplicates = [...byWebhookId]
    .filter(([, ats]) => ats.length > 1)
    .map(([id, ats]) => ({
      what: id,
      copies: ats.length,
      gapMs: (ats[1] as number) - (ats[0] as number),
      cause: causeOf(ats, run.faults),
    }));
  const doubleEvents = [...byEvent]
    .filter(([, webhookIds]) => webhookIds.size > 1)
    .map(([event, webhookIds]) => ({ what: event, copies: webhookIds.size, gapMs: 0, cause: 'emitted twice' }));

  // One idempotency key, one email: the sender's rows for the same token (the subject carries it).
  const { rows: twice } = await h.direct.query<{ subject: string }>(
    `select subject from sender.emails where subject like 'chaos %' group by subject having count(*) > 1`,
  );

  return {
    acceptedTwice: twice.map((row) => row.subject),
    seconds: Math.round(run.seconds),
    requests: run.stats.requests,
    retries: run.stats.retries,
    accepted: run.stats.accepted,
    abandoned: run.stats.abandoned,
    refused: run.stats.refused,
    slowestAnswerMs: run.stats.slowestAnswerMs,
    faults: run.faults,
    // A copy: the harness's own stop, after this report, is no exit to report.
    unexpectedExits: [...run.unexpectedExits],
    notFinal: await notFinalNow(),
    notDelivered,
    eventsMissing,
    queuesNotEmpty: await queuesNotEmpty(),
    mxDuplicates,
    mxExtraTransactions,
    webhookDuplicates,
    doubleEvents,
    inFlightAtSenderKills: run.inFlightAtSenderKills,
  };
}

const tokens = new WeakMap<SinkMessage, string | null>();

/**
 * The stream's token a message at the MX carries in its subject (null: not one of the stream's), read once
 * per message: quiescence looks at every message again on each poll.
 */
function tokenOf(message: SinkMessage): string | null {
  let token = tokens.get(message);
  if (token === undefined) {
    token = /^Subject: chaos (\S+)/m.exec(message.raw.toString('latin1'))?.[1] ?? null;
    tokens.set(message, token);
  }
  return token;
}

/** A report as an operator reads it: the figures, then each duplicate's count by cause. */
export function describeReport(report: ChaosReport): string {
  const byCause = (duplicates: Duplicate[]) => {
    const counts = new Map<string, number>();
    for (const d of duplicates) counts.set(d.cause, (counts.get(d.cause) ?? 0) + d.copies - 1);
    return [...counts].map(([cause, n]) => `${n} from ${cause}`).join(', ') || 'none';
  };
  return [
    `${report.seconds} s, ${report.requests} requests (${report.retries} client retries), ${report.accepted} emails accepted, ${report.abandoned} abandoned`,
    `slowest answer ${report.slowestAnswerMs} ms`,
    ...report.faults.map(
      (f) => `  ${f.name}: ${f.endedAt - f.startedAt} ms, every service ready ${f.readyAfterMs} ms after`,
    ),
    `not final ${report.notFinal.length}, not delivered ${report.notDelivered.length}, events missing ${report.eventsMissing.length}, queues not empty ${report.queuesNotEmpty.length}, unexpected exits ${report.unexpectedExits.length}`,
    `MX duplicates: ${byCause(report.mxDuplicates)}; ${report.mxExtraTransactions} transactions more than one per email (deliveries in flight at the sender's kills: ${report.inFlightAtSenderKills}; attempts retaken from a dead sender: ${report.retakenDeliveries})`,
    `webhook duplicates (same webhook-id): ${byCause(report.webhookDuplicates)}`,
    `events emitted twice: ${report.doubleEvents.length}`,
  ].join('\n');
}
