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
import { createVerifiedDomain, observeBroker, startDnsServer, startSystem } from '@postline/testing';
import { closedLoop, deliveryDrained, inTurns, localInfra, median, type LoadResult, type Outcome } from './harness.ts';

localInfra();

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

/** A closed loop of CONCURRENCY callers for SECONDS after a 2 s warm-up (connections, TLS, AUTH, JIT, pools). */
async function load(send: () => Promise<void>): Promise<LoadResult> {
  return closedLoop({
    concurrency: CONCURRENCY,
    window: { seconds: SECONDS },
    turn: async (): Promise<Outcome> => {
      try {
        await send();
        return { ok: true };
      } catch (err) {
        return { ok: false, error: String(err) };
      }
    },
  });
}

const fmt = (r: LoadResult) =>
  `${r.rate.toFixed(0)} messages/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${r.count} messages, ${r.errors} errors)`;

const dns = await startDnsServer();
const system = await startSystem({ DNS_SERVERS: dns.address, RATE_LIMIT_PER_SECOND: '1000000', LOG_LEVEL: 'warn' });
try {
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const apiKey = String((await system.admin('team', 'create', '--name', 'Relay bench')).api_key);
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

  const rounds = await inTurns(ROUNDS, async (round) => {
    await deliveryDrained(system);
    const api = await load(sendHttp);
    console.log(`round ${round}: POST /emails (${CONCURRENCY} connections): ${fmt(api)}`);
    await deliveryDrained(system);
    const smtp = await load(sendSmtp);
    console.log(`round ${round}: SMTP relay (${CONCURRENCY} sessions): ${fmt(smtp)}`);
    console.log(`  → ${((100 * smtp.rate) / api.rate).toFixed(0)}% of this round's POST /emails`);
    return { api, smtp };
  });
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
