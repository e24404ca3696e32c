// Benchmark (run by hand, not a jest test): end-to-end throughput (accepted → DKIM-signed → 250 at a local
// sink MX) of a system with two sender replicas against the same system with one, side by side in one run.
//
//   node tests/perf/sender-replicas.ts [--emails 4000] [--rounds 3]
//
// Two whole systems run at once (one sender process, then two sharing the delivery queue as competing
// consumers), on their own databases and broker prefixes, delivering to one sink through one local DNS
// server. Each burst sends `emails` emails with POST /emails/batch (100 per request, 4 in flight) to one
// system and waits for the last at the sink; the figure is emails / (last message at the sink − first
// request). The systems take turns for `rounds` rounds (the idle one costs next to nothing); the figures
// are the medians. On the 2-core machine the second sender competes for the same cores as the first, the
// gateway, Postgres and RabbitMQ, so the ratio shows what a replica adds when the cores are shared.
import { parseArgs } from 'node:util';
import { Resend } from 'resend';
import {
  createVerifiedDomain,
  observeBroker,
  startDnsServer,
  startSinkMx,
  startSystem,
  type System,
} from '@postline/testing';
import { inTurns, localInfra, middle } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: { emails: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '3' } },
});
const N = Number(args.emails);
const ROUNDS = Number(args.rounds);
const RCPT = 'sink.test';
const html = '<p>Thanks for your order. Your receipt is below.</p><table><tr><td>Widget</td><td>$10</td></tr></table>';

const sink = await startSinkMx();
const dns = await startDnsServer();
dns.set(RCPT, [{ type: 'MX', exchange: `mx.${RCPT}`, priority: 10 }]);
dns.set(`mx.${RCPT}`, [{ type: 'A', address: sink.host }]);

type Bench = { label: string; system: System; resend: Resend; from: string };

async function startBench(label: string, senders: number): Promise<Bench> {
  const system = await startSystem(
    {
      DNS_SERVERS: dns.address,
      RATE_LIMIT_PER_SECOND: '1000000',
      LOG_LEVEL: 'warn',
      ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
      MX_DELIVERY_PORT: String(sink.port),
    },
    { replicas: { sender: senders } },
  );
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const resend = new Resend(String((await system.admin('team', 'create', '--name', label)).api_key), {
    baseUrl: system.apiUrl,
  });
  const domain = await createVerifiedDomain({
    resend,
    dns,
    events,
    name: `${label}${Date.now().toString(36)}.example.com`,
  });
  await events.close();
  return { label, system, resend, from: `Acme <hello@${domain.name}>` };
}

/** Waits until the sink has no session open, so that each burst has it to itself. */
async function sinkIdle(): Promise<void> {
  while (sink.openSessions() > 0) await new Promise((resolve) => setTimeout(resolve, 20));
}

async function burst(bench: Bench, round: number): Promise<number> {
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
          from: bench.from,
          to: `${bench.label}${round}.${from + k}@${RCPT}`,
          subject: 'Your receipt',
          html,
        }));
        const { error } = await bench.resend.batch.send(batch);
        if (error) throw new Error(JSON.stringify(error));
      }
    }),
  );
  await sink.waitForMessages(N, 600_000);
  return N / ((performance.now() - start) / 1000);
}

const one = await startBench('one', 1);
const two = await startBench('two', 2);
try {
  const rounds = await inTurns(ROUNDS, async (round) => {
    const a = await burst(one, round);
    const b = await burst(two, round);
    console.log(
      `round ${round}: one sender ${a.toFixed(0)} emails/s, two senders ${b.toFixed(0)} emails/s → ${(b / a).toFixed(2)}×`,
    );
    return { one: a, two: b };
  });
  const a = middle(rounds.map((r) => r.one));
  const b = middle(rounds.map((r) => r.two));
  console.log(
    `median of ${ROUNDS} rounds: one sender ${a.toFixed(0)} emails/s, two senders ${b.toFixed(0)} emails/s → ${(b / a).toFixed(2)}×`,
  );
} finally {
  await one.system.stop();
  await two.system.stop();
  await sink.close();
  await dns.close();
}
