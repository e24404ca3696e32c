// Benchmark (run by hand, not a jest test): emails accepted through the real system, DKIM-signed, and
// answered 250 by a local sink MX (smtp-server, reached through a local DNS server), against a plain
// pooled nodemailer client sending the same messages to the same sink without DKIM, in the same run.
//
//   node tests/perf/email-delivery.ts [--emails 2000] [--connections 5] [--rounds 3]
//
// Baseline: one nodemailer pool (`connections` connections, as many as the sender opens per destination)
// sending `emails` messages; the figure is emails / (last 250 − start).
// System: the same number of emails accepted with POST /emails/batch (100 per request, 4 requests in
// flight) to recipients at the sink's domain; the figure is emails / (last message at the sink − first
// request sent). Both use STARTTLS, which the sink offers.
// The two take turns for `rounds` rounds with the system running (idle during the baseline), so that a
// machine whose speed drifts over minutes (a shared VM) affects both alike; the figures are the medians.
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { createVerifiedDomain, observeBroker, startDnsServer, startSinkMx, startSystem } from '@postline/testing';

const { values: args } = parseArgs({
  options: { emails: { type: 'string', default: '2000' }, connections: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' } },
});
const N = Number(args.emails);
const CONNECTIONS = Number(args.connections);
const ROUNDS = Number(args.rounds);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const RCPT = 'sink.test';
const html = '<p>Thanks for your order. Your receipt is below.</p><table><tr><td>Widget</td><td>$10</td></tr></table>';

const sink = await startSinkMx();
const dns = await startDnsServer();
dns.set(RCPT, [{ type: 'MX', exchange: `mx.${RCPT}`, priority: 10 }]);
dns.set(`mx.${RCPT}`, [{ type: 'A', address: sink.host }]);

/**
 * Waits until the sink has no session open (the other client's pool closes its own, the sender's idle
 * sessions after 2 s), so that each burst has the sink to itself and its most-at-once is its own.
 */
async function sinkIdle(): Promise<void> {
  while (sink.openSessions() > 0) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The baseline: a pooled nodemailer client sending N messages to the sink (no DKIM); emails/s. */
async function baselineBurst(round: number): Promise<number> {
  await sinkIdle();
  const transport = nodemailer.createTransport({
    pool: true,
    host: sink.host,
    port: sink.port,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
    tls: { rejectUnauthorized: false },
  });
  sink.messages.length = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: N }, (_, i) =>
      transport.sendMail({ from: 'Acme <hello@acme.example.com>', to: `b${round}.${i}@${RCPT}`, subject: 'Your receipt', html }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  return N / seconds;
}

const system = await startSystem({
  DNS_SERVERS: dns.address,
  RATE_LIMIT_PER_SECOND: '1000000',
  LOG_LEVEL: 'warn',
  ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
  MX_DELIVERY_PORT: String(sink.port),
  ...(process.env.PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROFILE_DIR}` } : {}),
});
try {
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const { api_key: apiKey } = system.admin('team', 'create', '--name', 'Bench');
  const resend = new Resend(String(apiKey), { baseUrl: system.apiUrl });
  const domain = await createVerifiedDomain({ resend, dns, events, name: `bench${Date.now().toString(36)}.example.com` });
  await events.close();

  /** N emails accepted in batches of 100 (4 in flight) until the last reaches the sink; emails/s. */
  async function systemBurst(round: number): Promise<{ rate: number; acceptedSeconds: number; signed: number }> {
    await sinkIdle();
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
            to: `s${round}.${from + k}@${RCPT}`,
            subject: 'Your receipt',
            html,
          }));
          const { error } = await resend.batch.send(batch);
          if (error) throw new Error(JSON.stringify(error));
        }
      }),
    );
    const acceptedSeconds = (performance.now() - start) / 1000;
    await sink.waitForMessages(N, 600_000);
    const seconds = (performance.now() - start) / 1000;
    const signed = sink.messages.filter((m) => m.raw.includes('DKIM-Signature:')).length;
    return { rate: N / seconds, acceptedSeconds, signed };
  }

  const ratios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const baselineRate = await baselineBurst(round);
    const connectionsBefore = sink.connections();
    const burst = await systemBurst(round);
    const ratio = burst.rate / baselineRate;
    ratios.push(ratio);
    console.log(
      `round ${round}: nodemailer (no DKIM, ${CONNECTIONS} connections) ${baselineRate.toFixed(0)} emails/s; ` +
        `Postline ${burst.rate.toFixed(0)} emails/s (accepted in ${burst.acceptedSeconds.toFixed(2)} s, ${burst.signed}/${N} DKIM-signed, ` +
        `${sink.connections() - connectionsBefore} SMTP sessions) → ${(100 * ratio).toFixed(0)}%`,
    );
  }
  console.log(`median of ${ROUNDS} rounds: ${(100 * median(ratios)).toFixed(0)}% of nodemailer (target ≥ 50%); at most ${sink.maxOpenSessions()} sessions open at once`);
  // A run that deferred some deliveries (they come back minutes later) shows why: the sender's warnings.
  const warnings = system.services.sender.output.join('').split('\n').filter((line) => line.includes('"level":"warn"') || line.includes('"level":"error"'));
  for (const line of warnings.slice(0, 10)) console.log(`  sender: ${line.slice(0, 400)}`);
  if (warnings.length > 10) console.log(`  sender: … ${warnings.length - 10} more warnings`);
} finally {
  await system.stop();
  await sink.close();
  await dns.close();
}
