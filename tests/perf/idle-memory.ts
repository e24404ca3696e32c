// Benchmark (run by hand, not a jest test): the memory of the six services, idle and under a delivery burst.
//
//   node tests/perf/idle-memory.ts [--settle 30] [--samples 5] [--load] [--emails 4000] [--rounds 2]
//
// Idle: the system started as `npm start` starts it (every service as `node services/<svc>/src/main.ts`
// with the defaults: no NODE_ENV, LOG_LEVEL, pool size or other setting of the test systems), on a fresh
// database, broker prefix and Redis prefix. Once every service answers /readyz with 200, `settle` seconds
// pass; then each service process is read `samples` times a second apart and the median of each figure is
// shown: RSS (what `ps` and a container's limit count), PSS (/proc/<pid>/smaps_rollup: each page shared
// with other processes, the Node binary's text most of all, divided among its sharers, so that the sum over
// the six is what the machine gives them) and, from /proc/<pid>/status, the anonymous part of the RSS (the
// heaps, malloc'd memory) and the threads.
// Load (`--load`): `rounds` bursts of `emails` emails accepted with POST /emails/batch (100 a request, 4 in
// flight), DKIM-signed and delivered to a local sink MX, with one webhook endpoint subscribed to every
// event; each service's RSS is read every 100 ms and the peak is shown: the memory to plan per service.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Resend } from 'resend';
import { SERVICE_NAMES, type ServiceName } from '@postline/contracts';
import { createVerifiedDomain, startDnsServer, startSinkMx, startSystem, type System } from '@postline/testing';
import { localInfra, log, median, sleep } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    settle: { type: 'string', default: '30' },
    samples: { type: 'string', default: '5' },
    load: { type: 'boolean', default: false },
    emails: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '2' },
  },
});
const SETTLE = Number(args.settle);
const SAMPLES = Number(args.samples);
const N = Number(args.emails);
const ROUNDS = Number(args.rounds);
const RCPT = 'sink.test';

type Reading = { rss: number; pss: number; anon: number; threads: number };

/** A `Name:   1234 kB` field of a /proc file, in MB. */
function field(text: string, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text);
  if (!match) throw new Error(`no ${name} in /proc`);
  return Number(match[1]) / 1024;
}

/** One process's memory now, in MB (threads: a count). */
function read(pid: number): Reading {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return {
    rss: field(status, 'VmRSS'),
    pss: field(rollup, 'Pss'),
    anon: field(status, 'RssAnon'),
    threads: field(status, 'Threads') * 1024,
  };
}

const pidOf = (system: System, name: ServiceName) => {
  const pid = system.services[name].process.pid;
  if (pid === undefined) throw new Error(`${name} has no process`);
  return pid;
};

const mb = (n: number) => n.toFixed(0).padStart(6);

function printIdle(samples: Record<string, Reading[]>): void {
  const rows = SERVICE_NAMES.map((name) => {
    const list = samples[name] ?? [];
    return {
      name,
      rss: median(list.map((r) => r.rss)),
      pss: median(list.map((r) => r.pss)),
      anon: median(list.map((r) => r.anon)),
      threads: median(list.map((r) => r.threads)),
    };
  });
  console.log(`\nidle, ${SETTLE} s after every /readyz answered 200 (median of ${SAMPLES} readings, MB):`);
  console.log(`${'service'.padEnd(20)}${'RSS'.padStart(6)}${'PSS'.padStart(6)}${'anon'.padStart(6)}  threads`);
  for (const r of [...rows].sort((a, b) => b.rss - a.rss))
    console.log(`${r.name.padEnd(20)}${mb(r.rss)}${mb(r.pss)}${mb(r.anon)}  ${r.threads.toFixed(0).padStart(7)}`);
  const sum = (k: 'rss' | 'pss' | 'anon') => rows.reduce((s, r) => s + r[k], 0);
  console.log(`${'total'.padEnd(20)}${mb(sum('rss'))}${mb(sum('pss'))}${mb(sum('anon'))}`);
}

async function idle(system: System): Promise<void> {
  log(`every service ready; settling ${SETTLE} s`);
  await sleep(SETTLE * 1000);
  const samples: Record<string, Reading[]> = {};
  for (let i = 0; i < SAMPLES; i++) {
    if (i > 0) await sleep(1000);
    for (const name of SERVICE_NAMES) (samples[name] ??= []).push(read(pidOf(system, name)));
  }
  printIdle(samples);
}

/** `rounds` delivery bursts with a webhook endpoint subscribed; the peak RSS of each service. */
async function underLoad(system: System, sink: Awaited<ReturnType<typeof startSinkMx>>, dns: Dns): Promise<void> {
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const peaks = Object.fromEntries(SERVICE_NAMES.map((n) => [n, 0])) as Record<ServiceName, number>;
  const sampler = setInterval(() => {
    for (const name of SERVICE_NAMES) peaks[name] = Math.max(peaks[name], read(pidOf(system, name)).rss);
  }, 100);
  try {
    const { api_key: apiKey } = await system.admin('team', 'create', '--name', 'Memory');
    const resend = new Resend(String(apiKey), { baseUrl: system.apiUrl });
    const domain = await createVerifiedDomain({
      resend,
      dns,
      env: system.env,
      name: `mem${Date.now().toString(36)}.example.com`,
    });
    const { error: hookError } = await resend.webhooks.create({
      endpoint: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
      events: ['email.sent', 'email.delivered'],
    });
    if (hookError) throw new Error(JSON.stringify(hookError));
    for (let round = 1; round <= ROUNDS; round++) {
      sink.messages.length = 0;
      const start = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (next < N) {
            const from = next;
            next = Math.min(N, next + 100);
            const batch = Array.from({ length: next - from }, (_, k) => ({
              from: `Acme <hello@${domain.name}>`,
              to: `r${round}.${from + k}@${RCPT}`,
              subject: 'Your receipt',
              html: '<p>Thanks for your order. Your receipt is below.</p>',
            }));
            const { error } = await resend.batch.send(batch);
            if (error) throw new Error(JSON.stringify(error));
          }
        }),
      );
      await sink.waitForMessages(N, 600_000);
      log(`round ${round}: ${N} emails delivered in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    }
    // The webhook deliveries and the engagement counters trail the last message a little.
    await sleep(5000);
  } finally {
    clearInterval(sampler);
    await new Promise((resolve) => receiver.close(resolve));
  }
  console.log(`\npeak RSS during ${ROUNDS} bursts of ${N} emails (delivered, DKIM-signed, webhooks sent), MB:`);
  for (const name of [...SERVICE_NAMES].sort((a, b) => peaks[b] - peaks[a]))
    console.log(`${name.padEnd(20)}${mb(peaks[name])}`);
  console.log(`${'total'.padEnd(20)}${mb(Object.values(peaks).reduce((s, v) => s + v, 0))}`);
}

type Dns = Awaited<ReturnType<typeof startDnsServer>>;

const sink = await startSinkMx();
const dns = await startDnsServer();
dns.set(RCPT, [{ type: 'MX', exchange: `mx.${RCPT}`, priority: 10 }]);
dns.set(`mx.${RCPT}`, [{ type: 'A', address: sink.host }]);

// startSystem's environment is a test system's; these undo what `npm start` would not set (a spawned
// process is given no variable whose value is undefined).
const system = await startSystem({
  NODE_ENV: undefined,
  LOG_LEVEL: undefined,
  DATABASE_POOL_SIZE: undefined,
  SHUTDOWN_TIMEOUT_MS: undefined,
  ...(args.load
    ? {
        DNS_SERVERS: dns.address,
        RATE_LIMIT_PER_SECOND: '1000000',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        MX_DELIVERY_PORT: String(sink.port),
        LOG_LEVEL: 'warn',
      }
    : {}),
});
try {
  await idle(system);
  if (args.load) await underLoad(system, sink, dns);
} finally {
  await system.stop();
  await sink.close();
  await dns.close();
}
