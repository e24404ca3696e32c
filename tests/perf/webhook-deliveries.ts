// Benchmark (run by hand, not a jest test): signed webhook deliveries by the real system (six services as
// processes, RabbitMQ, Postgres) against a plain undici client POSTing the same signed bodies to the same
// local receiver, in the same run; then the latency from an event published to its delivery received,
// at a steady rate.
//
//   node tests/perf/webhook-deliveries.ts [--events 5000] [--rounds 3] [--rate 500] [--seconds 10] [--concurrency 64]
//
// Throughput: N email.delivered events published to the broker at once, one endpoint subscribed; the
// figure is N / (last delivery received − first event published); the envelopes are built before the clock
// starts and published in slices of 100, so the receiver (in this process) keeps answering. Baseline: the same N bodies, signed the
// same way, POSTed by one undici Pool with `concurrency` requests in flight.
// The two bursts take turns for `rounds` rounds, so that a machine whose speed drifts over minutes (a
// shared VM) affects both alike; the figures are the medians of the rounds.
// Latency: `rate` events per second for `seconds`, each body carrying its publish time; p50/p99 of
// (received − published) at the receiver.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';
import { Pool } from 'undici';
import { Resend } from 'resend';
import { deliveredData, deliveredEnvelope, startSystem } from '@postline/testing';
import { newSecret, signedHeaders } from '../../services/webhook-dispatcher/src/domain/signing.ts';
import { inTurns, localInfra, middle, percentile } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '64' },
  },
});
const N = Number(args.events);
const ROUNDS = Number(args.rounds);
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);

// The receiver: answers 200 at once and notes when each email id arrived.
const arrivals = new Map<string, number>();
let onArrival: () => void = () => undefined;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = performance.timeOrigin + performance.now();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { email_id: string } };
    if (!arrivals.has(body.data.email_id)) arrivals.set(body.data.email_id, now);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
    onArrival();
  });
});
receiver.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

function waitForArrivals(ids: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`only ${ids.filter((id) => arrivals.has(id)).length}/${ids.length} arrived`)),
      timeoutMs,
    );
    let next = 0;
    onArrival = () => {
      while (next < ids.length && arrivals.has(ids[next]!)) next++;
      if (next === ids.length) {
        clearTimeout(timer);
        resolve();
      }
    };
    onArrival();
  });
}

const secret = newSecret();

/** The baseline: plain undici POSTing N bodies signed the same way to the same receiver; deliveries/s. */
async function baselineBurst(): Promise<number> {
  const pool = new Pool(new URL(receiverUrl).origin, { connections: CONCURRENCY });
  const baselineIds = Array.from({ length: N }, () => randomUUID());
  const bodies = baselineIds.map((id) =>
    JSON.stringify({ type: 'email.delivered', created_at: new Date().toISOString(), data: deliveredData(id) }),
  );
  const baselineStart = performance.now();
  let cursor = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (cursor < N) {
        const i = cursor++;
        const headers = signedHeaders({
          id: `msg_${randomUUID().replaceAll('-', '')}`,
          timestamp: Math.floor(Date.now() / 1000),
          body: bodies[i]!,
          secrets: [secret],
        });
        const r = await pool.request({
          path: '/hooks',
          method: 'POST',
          body: bodies[i],
          headers: { 'content-type': 'application/json', 'user-agent': 'bench', ...headers },
        });
        await r.body.dump();
      }
    }),
  );
  const baselineSeconds = (performance.now() - baselineStart) / 1000;
  await pool.close();
  return N / baselineSeconds;
}

// Postline: the whole system, one subscribed endpoint.
const system = await startSystem({
  ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
  RATE_LIMIT_PER_SECOND: '1000',
  LOG_LEVEL: 'warn',
});
try {
  const team = await system.admin('team', 'create', '--name', 'Bench');
  const resend = new Resend(String(team.api_key), { baseUrl: system.apiUrl });
  const hook = await resend.webhooks.create({ endpoint: receiverUrl, events: ['email.delivered'] });
  if (hook.error) throw new Error(JSON.stringify(hook.error));
  const connection = await amqp.connect(String(system.env.AMQP_URL));
  const channel = await connection.createConfirmChannel();
  const exchange = `${String(system.env.BROKER_PREFIX)}.events`;
  const envelope = (emailId: string) =>
    Buffer.from(JSON.stringify(deliveredEnvelope({ teamId: String(team.team_id), emailId })));
  const publish = (emailId: string, content = envelope(emailId)) => {
    const at = performance.timeOrigin + performance.now();
    channel.publish(exchange, 'email.delivered', content, { persistent: true });
    return at;
  };

  // Warm-up (connections, prepared plans), not measured.
  const warm = Array.from({ length: 200 }, () => randomUUID());
  for (const id of warm) publish(id);
  await waitForArrivals(warm, 60_000);

  /** N events published at once; their deliveries/s and when they arrived. */
  async function systemBurst() {
    // The envelopes are built before the clock starts, as the baseline's bodies are. The receiver shares
    // this thread, so publishing yields every 100 messages instead of keeping it from answering for the
    // whole burst.
    const ids = Array.from({ length: N }, () => randomUUID());
    const contents = ids.map((id) => envelope(id));
    const start = performance.timeOrigin + performance.now();
    for (let i = 0; i < N; i++) {
      publish(ids[i]!, contents[i]);
      if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
    }
    const published = performance.timeOrigin + performance.now() - start;
    await channel.waitForConfirms();
    const confirmed = performance.timeOrigin + performance.now() - start;
    await waitForArrivals(ids, 300_000);
    const burst = ids.map((id) => arrivals.get(id)! - start).sort((a, b) => a - b);
    return { rate: N / (burst.at(-1)! / 1000), published, confirmed, burst };
  }

  const rounds = await inTurns(ROUNDS, async (round) => {
    const baselineRate = await baselineBurst();
    const burst = await systemBurst();
    console.error(
      `round ${round}: undici ${Math.round(baselineRate)}/s, Postline ${Math.round(burst.rate)}/s (${((100 * burst.rate) / baselineRate).toFixed(1)}%)`,
    );
    return { baseline: baselineRate, postline: burst.rate, burst };
  });
  const ratios = rounds.map((r) => r.postline / r.baseline);
  const typical = rounds.find((r) => r.postline / r.baseline === middle(ratios))!;
  const { published, confirmed, burst } = typical.burst;

  // 3. Latency at a steady rate.
  const sent = new Map<string, number>();
  const total = RATE * SECONDS;
  const latencyIds: string[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const id = randomUUID();
    latencyIds.push(id);
    sent.set(id, publish(id));
  }
  await waitForArrivals(latencyIds, 120_000);
  const latencies = latencyIds.map((id) => arrivals.get(id)! - sent.get(id)!).sort((a, b) => a - b);

  console.log(
    JSON.stringify(
      {
        events: N,
        rounds: rounds.map((r) => ({
          undici_per_second: Math.round(r.baseline),
          postline_per_second: Math.round(r.postline),
          ratio: Number((r.postline / r.baseline).toFixed(3)),
        })),
        median_ratio: Number(middle(ratios).toFixed(3)),
        // The median round's burst: when its deliveries arrived, from the first publish (a long tail shows
        // in p99 against last).
        burst_published_ms: { written: Math.round(published), confirmed: Math.round(confirmed) },
        burst_arrival_ms: {
          first: Math.round(burst[0]!),
          p10: Math.round(percentile(burst, 10)),
          p50: Math.round(percentile(burst, 50)),
          p90: Math.round(percentile(burst, 90)),
          p99: Math.round(percentile(burst, 99)),
          last: Math.round(burst.at(-1)!),
        },
        latency_rate_per_second: RATE,
        latency_events: total,
        latency_ms: {
          p50: Number(percentile(latencies, 50).toFixed(1)),
          p99: Number(percentile(latencies, 99).toFixed(1)),
          max: Number(latencies.at(-1)!.toFixed(1)),
        },
      },
      null,
      2,
    ),
  );
  await connection.close();
} finally {
  await system.stop();
  receiver.closeAllConnections();
  receiver.close();
}
