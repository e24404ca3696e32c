// Benchmark (run by hand, not a jest test): messages per second through the SMTP relay against POST /emails
// with the same concurrency, in the same run on the same system (six services as processes, RabbitMQ,
// Postgres, Redis). Target: the relay at ≥ 50% of POST /emails (issue 23).
//
//   node tests/perf/relay.ts [--seconds 10] [--rounds 3] [--concurrency 8]
//
// - relay: `concurrency` SMTP sessions on the STARTTLS port (nodemailer's pool, AUTH once per session),
//   kept open for the whole phase; each session sends its next small message as soon as the last one is
//   answered. The message is prebuilt (nodemailer's `raw`), so the client spends its time on SMTP, not on
//   composing MIME.
// - POST /emails: `concurrency` kept-alive HTTP connections (undici) sending the JSON equivalent.
// Each phase runs `seconds` after a 2 s warm-up; the two take turns for `rounds` rounds, each starting once
// the delivery backlog of the one before has drained, so that a machine whose speed drifts affects both
// alike; the figures are the medians. Recipients are sandbox addresses: delivery makes no network calls.
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { Pool } from 'undici';
import { Resend } from 'resend';
import { createVerifiedDomain, observeBroker, startDnsServer, startSystem, type System } from '@postline/testing';

// The local servers unless the environment names others (npm test's defaults).
process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.AMQP_URL ??= 'amqp://guest:guest@127.0.0.1:5672';
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
  },
});
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);

type Result = { messages: number; errors: number; seconds: number; rate: number; p50: number; p99: number };

/** Closed loop: `concurrency` callers, each starting its next `send` as soon as the last one is answered. */
async function load(send: () => Promise<void>, seconds: number, concurrency: number): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  const callers = Array.from({ length: concurrency }, async () => {
    while (!stop) {
      const started = performance.now();
      try {
        await send();
        if (measuring) latencies.push(performance.now() - started);
      } catch (err) {
        if (!measuring) continue;
        errors++;
        if (errors < 3) console.error(String(err));
      }
    }
  });
  await new Promise((r) => setTimeout(r, 2000)); // warm-up: connections, TLS, AUTH, JIT, pools
  measuring = true;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  measuring = false;
  const elapsed = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all(callers);
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return {
    messages: latencies.length,
    errors,
    seconds: elapsed,
    rate: latencies.length / elapsed,
    p50: pct(50),
    p99: pct(99),
  };
}

const fmt = (r: Result) =>
  `${r.rate.toFixed(0)} messages/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${r.messages} messages, ${r.errors} errors)`;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** Waits until the sender has no recipient pending delivery (its gauge on /metrics), then a second more. */
async function drained(system: System): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    const text = await (await fetch(`${system.services.sender.url}/metrics`)).text();
    const pending = [...text.matchAll(/^email_recipients_waiting\{([^}]*)\} (\d+)/gm)].find((m) =>
      m[1]?.includes('status="pending"'),
    );
    if (!pending || Number(pending[2]) === 0) {
      await sleep(1000);
      return;
    }
    await sleep(500);
  }
  throw new Error('the delivery backlog did not drain within 3 minutes');
}

const dns = await startDnsServer();
const system = await startSystem({ DNS_SERVERS: dns.address, RATE_LIMIT_PER_SECOND: '1000000', LOG_LEVEL: 'warn' });
try {
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const apiKey = String(system.admin('team', 'create', '--name', 'Relay bench').api_key);
  const resend = new Resend(apiKey, { baseUrl: system.apiUrl });
  const domain = (
    await createVerifiedDomain({ resend, dns, events, name: `relaybench${Date.now().toString(36)}.example.com` })
  ).name;
  await events.close();

  const from = `Acme <hello@${domain}>`;
  const to = 'delivered@postline.test';
  const subject = 'Your receipt';
  const html = '<p>Thanks for your order.</p>';
  const raw = [
    `From: ${from}`,
    `To: ${to}`,
    `Subject: ${subject}`,
    'MIME-Version: 1.0',
    'Content-Type: text/html; charset=utf-8',
    '',
    html,
    '',
  ].join('\r\n');
  const json = JSON.stringify({ from, to: [to], subject, html });

  const relay = nodemailer.createTransport({
    pool: true,
    maxConnections: CONCURRENCY,
    maxMessages: Infinity,
    host: '127.0.0.1',
    port: system.smtp.relay,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'postline', pass: apiKey },
  });
  const http = new Pool(system.apiUrl, { connections: CONCURRENCY, pipelining: 1 });
  const sendSmtp = async () => {
    const info = await relay.sendMail({ envelope: { from: `hello@${domain}`, to: [to] }, raw });
    if (!info.response.startsWith('250 ')) throw new Error(info.response);
  };
  const sendHttp = async () => {
    const res = await http.request({
      method: 'POST',
      path: '/emails',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${apiKey}`,
        'user-agent': 'postline-bench',
      },
      body: json,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`);
  };

  const rounds: { api: Result; smtp: Result }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    await drained(system);
    const api = await load(sendHttp, SECONDS, CONCURRENCY);
    console.log(`round ${round}: POST /emails (${CONCURRENCY} connections): ${fmt(api)}`);
    await drained(system);
    const smtp = await load(sendSmtp, SECONDS, CONCURRENCY);
    console.log(`round ${round}: SMTP relay (${CONCURRENCY} sessions): ${fmt(smtp)}`);
    console.log(`  → ${((100 * smtp.rate) / api.rate).toFixed(0)}% of this round's POST /emails`);
    rounds.push({ api, smtp });
  }
  relay.close();
  await http.close();

  const ratio = median(rounds.map((r) => r.smtp.rate / r.api.rate));
  console.log(
    `relay: ${(100 * ratio).toFixed(0)}% of POST /emails's messages per second (target ≥ 50%); median of ${ROUNDS} rounds: ` +
      `POST /emails ${median(rounds.map((r) => r.api.rate)).toFixed(0)}/s (p99 ${median(rounds.map((r) => r.api.p99)).toFixed(1)} ms), ` +
      `relay ${median(rounds.map((r) => r.smtp.rate)).toFixed(0)}/s (p99 ${median(rounds.map((r) => r.smtp.p99)).toFixed(1)} ms)`,
  );
} finally {
  await system.stop();
  await dns.close();
}
