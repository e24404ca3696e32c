// Benchmark (run by hand, not a jest test): emails accepted through the real system, DKIM-signed, and
// answered 250 by a local sink MX (smtp-server, reached through a local DNS server), against a plain
// pooled nodemailer client sending the same messages to the same sink without DKIM, in the same run.
//
//   node tests/perf/email-delivery.ts [--emails 2000] [--connections 5]
//
// Baseline: one nodemailer pool (`connections` connections, as many as the sender opens per destination)
// sending `emails` messages; the figure is emails / (last 250 − start).
// System: the same number of emails accepted with POST /emails/batch (100 per request, 4 requests in
// flight) to recipients at the sink's domain; the figure is emails / (last message at the sink − first
// request sent). Both use STARTTLS, which the sink offers.
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { createVerifiedDomain, observeBroker, startDnsServer, startSinkMx, startSystem } from '@postline/testing';

const { values: args } = parseArgs({ options: { emails: { type: 'string', default: '2000' }, connections: { type: 'string', default: '5' } } });
const N = Number(args.emails);
const CONNECTIONS = Number(args.connections);
const RCPT = 'sink.test';
const html = '<p>Thanks for your order. Your receipt is below.</p><table><tr><td>Widget</td><td>$10</td></tr></table>';

const sink = await startSinkMx();
const dns = await startDnsServer();
dns.set(RCPT, [{ type: 'MX', exchange: `mx.${RCPT}`, priority: 10 }]);
dns.set(`mx.${RCPT}`, [{ type: 'A', address: sink.host }]);

// 1. Baseline.
const transport = nodemailer.createTransport({
  pool: true,
  host: sink.host,
  port: sink.port,
  maxConnections: CONNECTIONS,
  maxMessages: Infinity,
  tls: { rejectUnauthorized: false },
});
const baselineStart = performance.now();
await Promise.all(
  Array.from({ length: N }, (_, i) =>
    transport.sendMail({ from: 'Acme <hello@acme.example.com>', to: `b${i}@${RCPT}`, subject: 'Your receipt', html }),
  ),
);
const baselineSeconds = (performance.now() - baselineStart) / 1000;
transport.close();
const baselineRate = N / baselineSeconds;
console.log(`baseline (pooled nodemailer, no DKIM, ${CONNECTIONS} connections): ${N} emails in ${baselineSeconds.toFixed(2)} s = ${baselineRate.toFixed(0)} emails/s`);
sink.messages.length = 0;

// 2. The system.
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

  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < N) {
        const from = next;
        next = Math.min(N, next + 100);
        const batch = Array.from({ length: next - from }, (_, k) => ({
          from: `Acme <hello@${domain.name}>`,
          to: `s${from + k}@${RCPT}`,
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
  const rate = N / seconds;
  const signed = sink.messages.filter((m) => m.raw.includes('DKIM-Signature:')).length;
  console.log(`system (accepted in ${acceptedSeconds.toFixed(2)} s): ${N} emails at the sink in ${seconds.toFixed(2)} s = ${rate.toFixed(0)} emails/s, ${signed} DKIM-signed`);
  console.log(`  → ${((100 * rate) / baselineRate).toFixed(0)}% of the baseline (target ≥ 50%); the sink saw ${sink.connections()} connections in all, at most ${sink.maxOpenSessions()} at once`);
  // A run that deferred some deliveries (they come back minutes later) shows why: the sender's warnings.
  const warnings = system.services.sender.output.join('').split('\n').filter((line) => line.includes('"level":"warn"') || line.includes('"level":"error"'));
  for (const line of warnings.slice(0, 10)) console.log(`  sender: ${line.slice(0, 400)}`);
  if (warnings.length > 10) console.log(`  sender: … ${warnings.length - 10} more warnings`);
} finally {
  await system.stop();
  await sink.close();
  await dns.close();
}
