// Benchmark (run by hand, not a jest test): accepting emails through the real gateway and sender (six
// services as processes, RabbitMQ, Postgres, Redis) against a one-process baseline (express + one
// Postgres transaction inserting a row and an outbox row), under the same closed-loop load in the same run;
// then POST /emails/batch with 100 emails per request.
//
//   node tests/perf/email-accept.ts [--seconds 10] [--rounds 3] [--concurrency 32] [--batch-seconds 10] [--batch-concurrency 4]
//                                   [--delivery paused,running]
//
// Each load phase keeps `concurrency` requests in flight for `seconds` after a 2 s warm-up and reports
// requests per second and latency percentiles. Recipients are sandbox addresses, so delivery makes no
// network calls. The phases take turns for `rounds` rounds (baseline, sender alone, gateway), so that a
// machine whose speed drifts over minutes (a shared VM) affects both sides alike; the figures are the
// medians of the rounds. Two systems are measured one after the other, each against the same baseline:
//
// - `paused` (the accept figure): the sender runs with DELIVERY_CONCURRENCY=0, so no `sender.deliver`
//   consumer runs and both sides do only the accept path. The script declares the delivery command queue
//   itself (as the sender would), so the commands land where they would in production; at the end it
//   deletes that queue with the commands in it. Each phase starts once the outboxes and the other work
//   queues are empty.
// - `running` (the full pipeline, as in production): delivery runs beside the accepts; each phase starts
//   once the delivery backlog from the phase before has drained. The batch phase runs on this system (or
//   on the last one measured, when `--delivery` leaves it out); `--batch-seconds 0` skips it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';
import { Pool } from 'undici';
import { Resend } from 'resend';
import { consumerQueueNames, declareConsumerQueues, DEFAULT_RETRY_POLICY, exchangeNames } from '@postline/platform';
import {
  closedLoop,
  deliveryDrained,
  inTurns,
  localInfra,
  median,
  metricSum,
  profileEnv,
  settled,
  type LoadResult,
  type Outcome,
} from './harness.ts';
import {
  createTestDatabase,
  createVerifiedDomain,
  observeBroker,
  startDnsServer,
  startSystem,
  type DnsServer,
  type System,
} from '@postline/testing';

localInfra();

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '32' },
    'batch-seconds': { type: 'string', default: '10' },
    'batch-concurrency': { type: 'string', default: '4' },
    delivery: { type: 'string', default: 'paused,running' },
  },
});

type Mode = 'paused' | 'running';
type Round = { baseline: LoadResult; direct: LoadResult; single: LoadResult };

/** A closed loop of POST requests: `concurrency` kept-alive connections, a 2 s warm-up, then `seconds`. */
async function load(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: () => string,
  seconds: number,
  concurrency: number,
): Promise<LoadResult> {
  const pool = new Pool(new URL(url).origin, { connections: concurrency, pipelining: 1 });
  try {
    return await closedLoop({
      concurrency,
      window: { seconds },
      turn: async (): Promise<Outcome> => {
        const res = await pool.request({
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json', ...headers },
          body: body(),
        });
        const text = await res.body.text();
        return res.statusCode === 200
          ? { ok: true }
          : { ok: false, error: `status ${res.statusCode}: ${text.slice(0, 200)}` };
      },
    });
  } finally {
    await pool.close();
  }
}

const fmt = (r: LoadResult) =>
  `${r.rate.toFixed(0)} req/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${r.count} requests, ${r.errors} errors)`;
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const BATCH_SECONDS = Number(args['batch-seconds']);
const MODES = args.delivery.split(',').map((m) => m.trim());
if (MODES.length === 0 || MODES.some((m) => m !== 'paused' && m !== 'running')) {
  throw new Error(`--delivery takes paused, running or both (comma-separated), not "${args.delivery}"`);
}
const email = (from: string) => () =>
  JSON.stringify({
    from: `Acme <hello@${from}>`,
    to: ['delivered@postline.test'],
    subject: 'Your receipt',
    html: '<p>Thanks for your order.</p>',
  });

/**
 * Paused: waits until every outbox is published and every work queue a service reports is empty (the
 * webhook fan-out of `email.sent`), then a second more. The parked delivery commands do not count.
 */
async function quiet(system: System, parkedQueue: string): Promise<void> {
  await settled(async () => {
    let left = 0;
    for (const service of Object.values(system.services)) {
      left += await metricSum(service.url, 'outbox_pending_messages');
      left += await metricSum(
        service.url,
        'broker_queue_messages',
        (labels) => labels.includes('kind="work"') && !labels.includes(`queue="${parkedQueue}"`),
      );
    }
    return left;
  }, 'the outboxes and work queues');
}

/** Declares the sender's delivery command queues (work, retry tiers, dead letters) for a paused system. */
async function parkDeliveryCommands(
  amqpUrl: string,
  prefix: string,
): Promise<{ work: string; drop: () => Promise<number> }> {
  const queues = consumerQueueNames(prefix, 'sender', 'deliver', DEFAULT_RETRY_POLICY.tiersMs);
  const connection = await amqp.connect(amqpUrl);
  const ch = await connection.createChannel();
  await declareConsumerQueues(ch, exchangeNames(prefix), queues, [
    { exchange: 'commands', routingKey: 'sender.deliver' },
  ]);
  return {
    work: queues.work,
    /** Deletes the queues with the commands in them; returns how many commands were dropped. */
    async drop() {
      const { messageCount } = await ch.deleteQueue(queues.work);
      for (const queue of [queues.dead, ...queues.tiers.map((t) => t.queue)]) await ch.deleteQueue(queue);
      await connection.close();
      return messageCount;
    },
  };
}

/** One system in one delivery mode: `rounds` of baseline, sender alone and gateway, then the batch phase if asked. */
async function measure(mode: Mode, dns: DnsServer, baselineUrl: string, withBatch: boolean): Promise<Round[]> {
  const system = await startSystem({
    DNS_SERVERS: dns.address,
    RATE_LIMIT_PER_SECOND: '1000000',
    LOG_LEVEL: 'warn',
    // Read by the sender only: 0 runs no `sender.deliver` consumer.
    ...(mode === 'paused' ? { DELIVERY_CONCURRENCY: '0' } : {}),
    ...profileEnv(),
  });
  let parked: Awaited<ReturnType<typeof parkDeliveryCommands>> | undefined;
  try {
    // Before the first email (the domain's probe), so that every delivery command lands in the queue.
    if (mode === 'paused')
      parked = await parkDeliveryCommands(String(system.env.AMQP_URL), String(system.env.BROKER_PREFIX));
    const parkedQueue = parked?.work;
    const settle = parkedQueue ? () => quiet(system, parkedQueue) : () => deliveryDrained(system);
    const events = await observeBroker({
      amqpUrl: String(system.env.AMQP_URL),
      prefix: String(system.env.BROKER_PREFIX),
      bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
    });
    const { api_key: apiKey, team_id: teamId } = await system.admin('team', 'create', '--name', 'Bench');
    const resend = new Resend(String(apiKey), { baseUrl: system.apiUrl });
    const domain = await createVerifiedDomain({
      resend,
      dns,
      events,
      name: `bench${Date.now().toString(36)}.example.com`,
    });
    await events.close();
    const auth = { authorization: `Bearer ${apiKey}`, 'user-agent': 'postline-bench' };

    const rounds = await inTurns(ROUNDS, async (round): Promise<Round> => {
      await settle();
      const base = await load(baselineUrl, '/emails', {}, email('example.com'), SECONDS, CONCURRENCY);
      console.log(`[${mode}] round ${round}: baseline (express + 1 transaction): ${fmt(base)}`);
      const direct = await load(
        system.services.sender.url,
        '/emails',
        { 'x-postline-team-id': String(teamId) },
        email(domain.name),
        SECONDS,
        CONCURRENCY,
      );
      console.log(`[${mode}] round ${round}: POST /emails to the sender directly (no gateway): ${fmt(direct)}`);
      await settle();
      const single = await load(system.apiUrl, '/emails', auth, email(domain.name), SECONDS, CONCURRENCY);
      console.log(`[${mode}] round ${round}: POST /emails through the gateway: ${fmt(single)}`);
      console.log(
        `  → ${((100 * single.rate) / base.rate).toFixed(0)}% of this round's baseline, p99 ${(single.p99 / base.p99).toFixed(2)}×`,
      );
      return { baseline: base, direct, single };
    });

    if (withBatch) {
      await settle();
      const batchBody = () =>
        JSON.stringify(Array.from({ length: 100 }, () => JSON.parse(email(domain.name)()) as unknown));
      const batch = await load(
        system.apiUrl,
        '/emails/batch',
        auth,
        batchBody,
        BATCH_SECONDS,
        Number(args['batch-concurrency']),
      );
      console.log(`[${mode}] POST /emails/batch (100 emails): ${fmt(batch)}`);
      console.log(`  → ${(batch.rate * 100).toFixed(0)} emails accepted per second (target ≥ 10,000)`);
    }
    return rounds;
  } finally {
    try {
      if (parked) console.log(`[${mode}] dropped ${await parked.drop()} parked delivery commands`);
    } finally {
      await system.stop();
    }
  }
}

function summary(mode: Mode, rounds: Round[]): string {
  const ratio = median(rounds.map((r) => r.single.rate / r.baseline.rate));
  const p99 = median(rounds.map((r) => r.single.p99 / r.baseline.p99));
  const label = mode === 'paused' ? 'accept (delivery paused)' : 'full pipeline (delivery running)';
  return (
    `${label}: ${(100 * ratio).toFixed(0)}% of the baseline's requests per second (target ≥ 75%), p99 ${p99.toFixed(2)}× (target ≤ 2×); ` +
    `median of ${rounds.length} rounds: baseline ${median(rounds.map((r) => r.baseline.rate)).toFixed(0)} req/s (p99 ${median(rounds.map((r) => r.baseline.p99)).toFixed(1)} ms), ` +
    `sender alone ${median(rounds.map((r) => r.direct.rate)).toFixed(0)} req/s, gateway ${median(rounds.map((r) => r.single.rate)).toFixed(0)} req/s (p99 ${median(rounds.map((r) => r.single.p99)).toFixed(1)} ms)`
  );
}

// The baseline: its own process on its own database, alive for the whole run.
const baselineDb = await createTestDatabase('perf_baseline');
const baseline = spawn(process.execPath, [fileURLToPath(new URL('./accept-baseline.ts', import.meta.url))], {
  env: { ...process.env, DATABASE_URL: baselineDb.url, PORT: '0' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const baselinePort = await new Promise<number>((resolve) => {
  baseline.stdout.on('data', (d: Buffer) => {
    const match = /listening (\d+)/.exec(d.toString());
    if (match) resolve(Number(match[1]));
  });
});
const dns = await startDnsServer();

try {
  const results: [Mode, Round[]][] = [];
  const batchMode = MODES.includes('running') ? 'running' : MODES[MODES.length - 1];
  for (const mode of MODES as Mode[]) {
    results.push([
      mode,
      await measure(mode, dns, `http://127.0.0.1:${baselinePort}`, BATCH_SECONDS > 0 && mode === batchMode),
    ]);
  }
  for (const [mode, rounds] of results) console.log(summary(mode, rounds));
} finally {
  baseline.kill('SIGTERM');
  await new Promise((r) => baseline.once('exit', r));
  await baselineDb.drop();
  await dns.close();
}
