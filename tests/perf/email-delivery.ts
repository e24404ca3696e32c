// Benchmark (run by hand, not a jest test): emails accepted through the real system, DKIM-signed, and
// answered 250 by a local sink MX (smtp-server, reached through a local DNS server), against a plain
// pooled nodemailer client sending the same messages to the same sink, both without DKIM and with its own
// DKIM signing, in the same run.
//
//   node tests/perf/email-delivery.ts [--emails 2000] [--connections 5] [--rounds 3]
//
// Baselines: one nodemailer pool (`connections` connections, as many as the sender opens per destination)
// sending `emails` messages, once without DKIM and once with nodemailer's `dkim` option (an RSA-2048 key of
// its own, the same domain and selector as the system's); the figure is emails / (last 250 − start).
// System: the same number of emails accepted with POST /emails/batch (100 per request, 4 requests in
// flight) to recipients at the sink's domain; the figure is emails / (last message at the sink − first
// request sent). All use STARTTLS, which the sink offers.
// The three take turns for `rounds` rounds with the system running (idle during the baselines), so that a
// machine whose speed drifts over minutes (a shared VM) affects them alike; the figures are the medians.
import { generateKeyPairSync } from 'node:crypto';
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { createVerifiedDomain, observeBroker, startDnsServer, startSinkMx, startSystem } from '@postline/testing';
import { acceptInBatches, inTurns, localInfra, middle, profileEnv } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    emails: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
  },
});
const N = Number(args.emails);
const CONNECTIONS = Number(args.connections);
const ROUNDS = Number(args.rounds);
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

/** DKIM for a baseline: nodemailer signs every message itself with this key. */
type Dkim = { domainName: string; keySelector: string; privateKey: string };

/** A baseline: a pooled nodemailer client sending N messages from `fromDomain` to the sink; emails/s. */
async function baselineBurst(
  label: string,
  fromDomain: string,
  dkim: Dkim | undefined,
): Promise<{ rate: number; signed: number }> {
  await sinkIdle();
  const transport = nodemailer.createTransport({
    pool: true,
    host: sink.host,
    port: sink.port,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
    tls: { rejectUnauthorized: false },
    ...(dkim ? { dkim } : {}),
  });
  sink.messages.length = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: N }, (_, i) =>
      transport.sendMail({
        from: `Acme <hello@${fromDomain}>`,
        to: `${label}.${i}@${RCPT}`,
        subject: 'Your receipt',
        html,
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  transport.close();
  return { rate: N / seconds, signed: countSigned() };
}

/** Messages at the sink that carry a DKIM signature. */
function countSigned(): number {
  return sink.messages.filter((m) => m.raw.includes('DKIM-Signature:')).length;
}

const system = await startSystem({
  DNS_SERVERS: dns.address,
  RATE_LIMIT_PER_SECOND: '1000000',
  LOG_LEVEL: 'warn',
  ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
  MX_DELIVERY_PORT: String(sink.port),
  ...profileEnv(),
});
try {
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const { api_key: apiKey } = await system.admin('team', 'create', '--name', 'Bench');
  const resend = new Resend(String(apiKey), { baseUrl: system.apiUrl });
  const domain = await createVerifiedDomain({
    resend,
    dns,
    events,
    name: `bench${Date.now().toString(36)}.example.com`,
  });
  await events.close();
  // The baseline signs as the same domain and selector with a key of its own (`<selector>._domainkey.<name>`).
  const { data: details } = await resend.domains.get(domain.id);
  const keySelector = details?.records.find((r) => r.record === 'DKIM')?.name.split('._domainkey')[0];
  if (!keySelector) throw new Error(`no DKIM record on ${domain.name}`);
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const dkim: Dkim = { domainName: domain.name, keySelector, privateKey };

  /** N emails accepted in batches of 100 (4 in flight) until the last reaches the sink; emails/s. */
  async function systemBurst(round: number): Promise<{ rate: number; acceptedSeconds: number; signed: number }> {
    await sinkIdle();
    sink.messages.length = 0;
    const start = performance.now();
    await acceptInBatches(resend, N, (i) => ({
      from: `Acme <hello@${domain.name}>`,
      to: `s${round}.${i}@${RCPT}`,
      subject: 'Your receipt',
      html,
    }));
    const acceptedSeconds = (performance.now() - start) / 1000;
    await sink.waitForMessages(N, 600_000);
    const seconds = (performance.now() - start) / 1000;
    return { rate: N / seconds, acceptedSeconds, signed: countSigned() };
  }

  const ratios = await inTurns(ROUNDS, async (round) => {
    const plain = await baselineBurst(`b${round}`, domain.name, undefined);
    const signed = await baselineBurst(`d${round}`, domain.name, dkim);
    const connectionsBefore = sink.connections();
    const burst = await systemBurst(round);
    console.log(
      `round ${round}: nodemailer (${CONNECTIONS} connections) ${plain.rate.toFixed(0)} emails/s without DKIM, ` +
        `${signed.rate.toFixed(0)} emails/s with its own DKIM (${signed.signed}/${N} signed); ` +
        `Postline ${burst.rate.toFixed(0)} emails/s (accepted in ${burst.acceptedSeconds.toFixed(2)} s, ${burst.signed}/${N} DKIM-signed, ` +
        `${sink.connections() - connectionsBefore} SMTP sessions) → ${((100 * burst.rate) / plain.rate).toFixed(0)}% of nodemailer without DKIM, ` +
        `${((100 * burst.rate) / signed.rate).toFixed(0)}% of nodemailer with DKIM`,
    );
    return { plain: burst.rate / plain.rate, signed: burst.rate / signed.rate };
  });
  console.log(
    `median of ${ROUNDS} rounds: ${(100 * middle(ratios.map((r) => r.plain))).toFixed(0)}% of nodemailer without DKIM (target ≥ 50%), ` +
      `${(100 * middle(ratios.map((r) => r.signed))).toFixed(0)}% of nodemailer with DKIM; at most ${sink.maxOpenSessions()} sessions open at once`,
  );
  // A run that deferred some deliveries (they come back minutes later) shows why: the sender's warnings.
  const warnings = system.services.sender.output
    .join('')
    .split('\n')
    .filter((line) => line.includes('"level":"warn"') || line.includes('"level":"error"'));
  for (const line of warnings.slice(0, 10)) console.log(`  sender: ${line.slice(0, 400)}`);
  if (warnings.length > 10) console.log(`  sender: … ${warnings.length - 10} more warnings`);
} finally {
  await system.stop();
  await sink.close();
  await dns.close();
}
