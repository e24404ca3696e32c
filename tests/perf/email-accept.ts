// Benchmark (run by hand, not a jest test): accepting emails through the real gateway and sender (six
// services as processes, RabbitMQ, Postgres, Redis) against a one-process baseline (express + one
// Postgres transaction inserting a row and an outbox row), under the same closed-loop load in the same run;
// then POST /emails/batch with 100 emails per request.
//
//   node tests/perf/email-accept.ts [--seconds 10] [--rounds 3] [--concurrency 32] [--batch-seconds 10] [--batch-concurrency 4]
//
// Each load phase keeps `concurrency` requests in flight for `seconds` after a 2 s warm-up and reports
// requests per second and latency percentiles. Recipients are sandbox addresses, so delivery (which
// still runs, as in production) makes no network calls. The phases take turns for `rounds` rounds
// (baseline, sender alone, gateway), each starting once the system's delivery backlog from the phase
// before has drained, so that a machine whose speed drifts over minutes (a shared VM) affects both sides
// alike; the figures are the medians of the rounds.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { Resend } from 'resend';
import { createTestDatabase, createVerifiedDomain, observeBroker, startDnsServer, startSystem } from '@postline/testing';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '32' },
    'batch-seconds': { type: 'string', default: '10' },
    'batch-concurrency': { type: 'string', default: '4' },
  },
});

type Result = { requests: number; errors: number; seconds: number; rps: number; p50: number; p99: number };

/** Closed loop: `concurrency` callers each send the next request as soon as the last one is answered. */
async function load(url: string, path: string, headers: Record<string, string>, body: () => string, seconds: number, concurrency: number): Promise<Result> {
  const origin = new URL(url).origin;
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  const one = async () => {
    const started = performance.now();
    const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body: body() });
    const text = await res.body.text();
    if (!measuring) return;
    if (res.statusCode !== 200) {
      errors++;
      if (errors < 3) console.error(`status ${res.statusCode}: ${text.slice(0, 200)}`);
      return;
    }
    latencies.push(performance.now() - started);
  };
  const callers = Array.from({ length: concurrency }, async () => {
    while (!stop) await one();
  });
  await new Promise((r) => setTimeout(r, 2000)); // warm-up: connections, JIT, pools
  measuring = true;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  measuring = false;
  const elapsed = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all(callers);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return { requests: latencies.length, errors, seconds: elapsed, rps: latencies.length / elapsed, p50: pct(50), p99: pct(99) };
}

const fmt = (r: Result) => `${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${r.requests} requests, ${r.errors} errors)`;
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

// The baseline: its own process on its own database, alive for the whole run.
const baselineDb = await createTestDatabase('perf_baseline');
const baseline = spawn(process.execPath, ['tests/perf/accept-baseline.ts'], { env: { ...process.env, DATABASE_URL: baselineDb.url, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
const baselinePort = await new Promise<number>((resolve) => {
  baseline.stdout.on('data', (d: Buffer) => {
    const match = /listening (\d+)/.exec(d.toString());
    if (match) resolve(Number(match[1]));
  });
});
const email = (from: string) => () =>
  JSON.stringify({ from: `Acme <hello@${from}>`, to: ['delivered@postline.test'], subject: 'Your receipt', html: '<p>Thanks for your order.</p>' });

const dns = await startDnsServer();
const system = await startSystem({
  DNS_SERVERS: dns.address,
  RATE_LIMIT_PER_SECOND: '1000000',
  LOG_LEVEL: 'warn',
  // PROFILE_DIR=/tmp/prof writes each service's CPU profile there when it stops.
  ...(process.env.PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROFILE_DIR}` } : {}),
});

/** Waits until the sender has no recipient pending delivery (its gauge on /metrics), then a second more. */
async function drained(): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    const text = await (await fetch(`${system.services.sender.url}/metrics`)).text();
    const pending = /^email_recipients_waiting\{status="pending"\} (\d+)/m.exec(text);
    if (!pending || Number(pending[1]) === 0) {
      await sleep(1000);
      return;
    }
    await sleep(500);
  }
  throw new Error('the delivery backlog did not drain within 3 minutes');
}

try {
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const { api_key: apiKey, team_id: teamId } = system.admin('team', 'create', '--name', 'Bench');
  const resend = new Resend(String(apiKey), { baseUrl: system.apiUrl });
  const domain = await createVerifiedDomain({ resend, dns, events, name: `bench${Date.now().toString(36)}.example.com` });
  await events.close();
  const auth = { authorization: `Bearer ${apiKey}`, 'user-agent': 'postline-bench' };

  const rounds: { baseline: Result; direct: Result; single: Result }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    await drained();
    const base = await load(`http://127.0.0.1:${baselinePort}`, '/emails', {}, email('example.com'), SECONDS, CONCURRENCY);
    console.log(`round ${round}: baseline (express + 1 transaction): ${fmt(base)}`);
    const direct = await load(system.services.sender.url, '/emails', { 'x-postline-team-id': String(teamId) }, email(domain.name), SECONDS, CONCURRENCY);
    console.log(`round ${round}: POST /emails to the sender directly (no gateway): ${fmt(direct)}`);
    await drained();
    const single = await load(system.apiUrl, '/emails', auth, email(domain.name), SECONDS, CONCURRENCY);
    console.log(`round ${round}: POST /emails through the gateway: ${fmt(single)}`);
    console.log(`  → ${((100 * single.rps) / base.rps).toFixed(0)}% of this round's baseline, p99 ${(single.p99 / base.p99).toFixed(2)}×`);
    rounds.push({ baseline: base, direct, single });
  }
  const ratio = median(rounds.map((r) => r.single.rps / r.baseline.rps));
  const p99 = median(rounds.map((r) => r.single.p99 / r.baseline.p99));
  console.log(
    `median of ${ROUNDS} rounds: baseline ${median(rounds.map((r) => r.baseline.rps)).toFixed(0)} req/s (p99 ${median(rounds.map((r) => r.baseline.p99)).toFixed(1)} ms), ` +
      `sender alone ${median(rounds.map((r) => r.direct.rps)).toFixed(0)} req/s, gateway ${median(rounds.map((r) => r.single.rps)).toFixed(0)} req/s (p99 ${median(rounds.map((r) => r.single.p99)).toFixed(1)} ms)`,
  );
  console.log(`  → ${(100 * ratio).toFixed(0)}% of the baseline's requests per second (target ≥ 75%), p99 ${p99.toFixed(2)}× the baseline's (target ≤ 2×)`);

  await drained();
  const batchBody = () => JSON.stringify(Array.from({ length: 100 }, () => JSON.parse(email(domain.name)()) as unknown));
  const batch = await load(system.apiUrl, '/emails/batch', auth, batchBody, Number(args['batch-seconds']), Number(args['batch-concurrency']));
  console.log(`POST /emails/batch (100 emails): ${fmt(batch)}`);
  console.log(`  → ${(batch.rps * 100).toFixed(0)} emails accepted per second (target ≥ 10,000)`);
} finally {
  baseline.kill('SIGTERM');
  await new Promise((r) => baseline.once('exit', r));
  await baselineDb.drop();
  await system.stop();
  await dns.close();
}
