// What every benchmark script under tests/perf shares: the local servers as defaults, the closed-loop
// phase (warm-up, then a measuring window), rounds taken in turns, percentiles and medians, and the waits
// between phases. A script says what it sends and what it compares; this file says how it is measured.
import { join } from 'node:path';
import type { Resend } from 'resend';
import type { System } from '@postline/testing';

/**
 * The local Postgres, RabbitMQ and Redis (npm test's defaults) unless the environment names others. Call it
 * before anything reads the three URLs; the test helpers that start a system require all three.
 */
export function localInfra(): { databaseUrl: string; amqpUrl: string; redisUrl: string } {
  process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  process.env.AMQP_URL ??= 'amqp://guest:guest@127.0.0.1:5672';
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';
  return { databaseUrl: process.env.DATABASE_URL, amqpUrl: process.env.AMQP_URL, redisUrl: process.env.REDIS_URL };
}

/**
 * `PROFILE_DIR=/tmp/prof` makes each started service write its CPU profile there when it stops (under
 * `PROFILE_DIR/<under>` when given: a script that starts several systems keeps their profiles apart).
 */
export function profileEnv(under?: string): Record<string, string> {
  const dir = process.env.PROFILE_DIR;
  if (!dir) return {};
  return { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${under ? join(dir, under) : dir}` };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A line with the time, for scripts that report progress as they go. */
export const log = (line: string) => console.log(`[${new Date().toISOString()}] ${line}`);

/** The value at percentile `p` (0–100) of ascending `sorted`: the nearest rank at or above; NaN when empty. */
export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** The median: the middle value, or the mean of the two middle values of an even count. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * The median for an odd count; for an even one the upper of the two middle values, so that it is always
 * one of the values (a script that reports the median round's details finds that round by it).
 */
export const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/**
 * Rounds taken in turns: `one(round)` measures every side of a comparison once (round from 1), so that a
 * machine whose speed drifts over minutes (a shared VM) affects the sides alike; the figures are then the
 * medians over the rounds.
 */
export async function inTurns<T>(rounds: number, one: (round: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let round = 1; round <= rounds; round++) results.push(await one(round));
  return results;
}

/** One turn's answer: ok (timed from the turn's call, or from `startedAt` when given) or failed. */
export type Outcome = { ok: true; startedAt?: number } | { ok: false; error: string };

export type LoadResult = {
  count: number;
  errors: number;
  seconds: number;
  rate: number;
  p50: number;
  p99: number;
  max: number;
};

export type ClosedLoop = {
  /** Callers, each starting its next turn as soon as the last one is answered. */
  concurrency: number;
  /** One request (or message) of caller `caller` (0-based). A throw is not an answer: it stops the run. */
  turn: (caller: number) => Promise<Outcome>;
  /**
   * Before the window: a time (ms, default 2000) during which the callers already run uncounted
   * (connections, JIT, pools, caches), or a function run first, the window opening as the callers start.
   */
  warmUp?: number | (() => Promise<void>);
  /** The measuring window: `seconds` long, or until `until` settles. */
  window: { seconds: number } | { until: Promise<unknown> };
};

/**
 * A closed-loop phase. A turn counts when it is answered inside the window: its latency is
 * performance.now() at the answer less its start. The rate is the turns counted over the window's length.
 */
export async function closedLoop(options: ClosedLoop): Promise<LoadResult> {
  const latencies: number[] = [];
  const warmUp = options.warmUp ?? 2000;
  let errors = 0;
  let measuring = false;
  let stop = false;
  const caller = async (n: number) => {
    while (!stop) {
      const called = performance.now();
      const outcome = await options.turn(n);
      if (!measuring) continue;
      if (!outcome.ok) {
        errors++;
        if (errors < 3) console.error(outcome.error);
        continue;
      }
      latencies.push(performance.now() - (outcome.startedAt ?? called));
    }
  };
  if (typeof warmUp === 'function') {
    await warmUp();
    measuring = true;
  }
  const callers = Array.from({ length: options.concurrency }, (_, n) => caller(n));
  let start = performance.now();
  let seconds = 0;
  try {
    if (typeof warmUp === 'number') {
      await Promise.race([sleep(warmUp), Promise.all(callers)]);
      measuring = true;
      start = performance.now();
    }
    await Promise.race([
      'seconds' in options.window ? sleep(options.window.seconds * 1000) : options.window.until,
      Promise.all(callers),
    ]);
    measuring = false;
    seconds = (performance.now() - start) / 1000;
  } finally {
    // A failed turn or window ends every caller's loop too.
    stop = true;
  }
  await Promise.all(callers);
  latencies.sort((a, b) => a - b);
  return {
    count: latencies.length,
    errors,
    seconds,
    rate: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN,
  };
}

/** Sums the samples of one metric on a service's /metrics whose labels `keep` accepts. */
export async function metricSum(
  url: string,
  name: string,
  keep: (labels: string) => boolean = () => true,
): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) {
    if (keep(match[1] ?? '')) sum += Number(match[2]);
  }
  return sum;
}

/**
 * Waits until the sender has no recipient pending delivery (its `email_recipients_waiting` gauge), then a
 * second more, so that a phase starts without the last one's delivery backlog.
 */
export async function deliveryDrained(system: System): Promise<void> {
  await settled(
    () => metricSum(system.services.sender.url, 'email_recipients_waiting', (l) => l.includes('status="pending"')),
    'the delivery backlog',
  );
}

/** Waits (up to 3 minutes) until `left()` reads 0, then a second more. */
export async function settled(left: () => Promise<number>, what: string): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    if ((await left()) === 0) {
      await sleep(1000);
      return;
    }
    await sleep(500);
  }
  throw new Error(`${what} did not drain within 3 minutes`);
}

/** One email of a `POST /emails/batch` request. */
export type BatchEmail = Parameters<Resend['batch']['send']>[0][number];

/**
 * Accepts `count` emails, `email(i)` each, with `POST /emails/batch`: 100 a request, `inFlight` requests at
 * once (default 4), as a burst of API traffic would send them. Resolves once all are accepted.
 */
export async function acceptInBatches(
  resend: Resend,
  count: number,
  email: (i: number) => BatchEmail,
  inFlight = 4,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        const from = next;
        next = Math.min(count, next + 100);
        const { error } = await resend.batch.send(Array.from({ length: next - from }, (_, k) => email(from + k)));
        if (error) throw new Error(JSON.stringify(error));
      }
    }),
  );
}
