// Benchmark (run by hand, not a jest test): messages received through the real inbound MX (the inbound-smtp
// process of a whole system: RCPT checked against the domain read model, DATA read, parsed with mailparser,
// SPF/DKIM/DMARC checked with mailauth against a local DNS server, raw + parse + attachments + the
// `email.received` event committed in one transaction, the event published by the outbox relay), against a
// bare smtp-server in its own process that only reads each message and answers 250 (the ceiling), under the
// same closed-loop load in the same run.
//
//   node tests/perf/inbound-mx.ts [--seconds 10] [--rounds 3] [--connections 8] [--size 20480]
//
// Each phase keeps `connections` SMTP sessions open for `seconds` after a 2 s warm-up, each sending its next
// message (MAIL, RCPT and DATA pipelined, then the message) as soon as the last one is answered, and reports
// messages per second and latency percentiles (DATA's end to its 250). Messages are `size` bytes (text and
// html parts). The phases take turns for `rounds` rounds (bare, MX); the figures are the medians. The MX's
// figure counts a message once its 250 came back (after the commit); after each MX phase the script waits
// for every `email.received` of it to be published and reports how long the relay lagged.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Resend } from 'resend';
import {
  createReceivingDomain,
  observeBroker,
  openRawSmtp,
  startBareMx,
  startDnsServer,
  startSystem,
  type BrokerObserver,
  type RawSmtp,
} from '@postline/testing';
import { closedLoop, inTurns, localInfra, median, profileEnv, type LoadResult, type Outcome } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
    size: { type: 'string', default: '20480' },
    // Internal: run as the bare server's process and print its port.
    'bare-server': { type: 'boolean', default: false },
  },
});

const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONNECTIONS = Number(args.connections);
const SIZE = Number(args.size);

const fmt = (r: LoadResult) =>
  `${r.rate.toFixed(0)} msg/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${r.count} messages, ${r.errors} errors)`;

/** A message of about SIZE bytes: a text part and an html part of plain lines (nothing to dot-stuff). */
function message(to: string, n: number): string {
  const line = 'The quick brown fox jumps over the lazy dog, again and again, for the benchmark.';
  const lines = Math.max(1, Math.floor((SIZE - 600) / 2 / (line.length + 2)));
  const text = Array.from({ length: lines }, () => line).join('\r\n');
  const html = Array.from({ length: lines }, () => `<p>${line.slice(0, line.length - 7)}</p>`).join('\r\n');
  return [
    'From: Bench <bench@sender.test>',
    `To: ${to}`,
    `Subject: bench ${n}`,
    `Message-ID: <bench-${n}-${Date.now()}@sender.test>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    html,
    '--b1--',
    '',
  ].join('\r\n');
}

/**
 * A closed loop of CONNECTIONS sessions, each sending its next message as soon as the last one is answered;
 * a message is timed from its bytes' first write to its 250.
 */
async function load(port: number, to: string): Promise<LoadResult> {
  let n = 0;
  const sessions = await Promise.all(Array.from({ length: CONNECTIONS }, () => openRawSmtp(port)));
  for (const smtp of sessions) await smtp.command('EHLO bench.sender.test');
  const send = async (smtp: RawSmtp): Promise<Outcome> => {
    smtp.write(`MAIL FROM:<bench@sender.test>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
    const replies = [await smtp.read(), await smtp.read(), await smtp.read()];
    if (replies[2]!.code !== 354) throw new Error(`DATA refused: ${JSON.stringify(replies)}`);
    const startedAt = performance.now();
    smtp.write(`${message(to, n++)}.\r\n`);
    const reply = await smtp.read();
    return reply.code === 250 ? { ok: true, startedAt } : { ok: false, error: `reply ${reply.code} ${reply.text}` };
  };
  const result = await closedLoop({
    concurrency: CONNECTIONS,
    turn: (caller) => send(sessions[caller]!),
    window: { seconds: SECONDS },
  });
  for (const smtp of sessions) await smtp.command('QUIT');
  return result;
}

/** The bare server in its own process (as the MX is), and its port. */
async function spawnBare(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--bare-server'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /port (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`bare server exited (${code})`)));
  });
  return { port, child };
}

/** The MX's messages answered 250 so far (its counter on /metrics). */
async function acceptedSoFar(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^inbound_smtp_messages_total\{listener="mx",outcome="accepted"\} (\S+)/m.exec(text)?.[1] ?? 0);
}

/** Waits until `count` email.received events were published, and says how long that took. */
async function published(events: BrokerObserver, count: number): Promise<number> {
  const started = performance.now();
  const received = () => events.messages.filter((m) => m.routingKey === 'email.received').length;
  await events.waitFor(`${count} email.received events`, () => received() >= count, { timeoutMs: 180_000 });
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const dns = await startDnsServer();
  // The sender's domain publishes SPF and DMARC, so each message costs the lookups a real one does.
  dns.set('sender.test', [{ type: 'TXT', value: 'v=spf1 ip4:127.0.0.1 -all' }]);
  dns.set('_dmarc.sender.test', [{ type: 'TXT', value: 'v=DMARC1; p=none' }]);
  const system = await startSystem({
    DNS_SERVERS: dns.address,
    LOG_LEVEL: 'warn',
    ...profileEnv(),
  });
  const bare = await spawnBare();
  try {
    const events = await observeBroker({
      amqpUrl: String(system.env.AMQP_URL),
      prefix: String(system.env.BROKER_PREFIX),
      bindings: [
        { exchange: 'events', pattern: 'internal.domain.state' },
        { exchange: 'events', pattern: 'email.received' },
      ],
    });
    const resend = new Resend(String((await system.admin('team', 'create', '--name', 'Bench')).api_key), {
      baseUrl: system.apiUrl,
    });
    const domain = await createReceivingDomain({
      resend,
      dns,
      events,
      name: `bench${Date.now().toString(36)}.example.com`,
      mxPort: system.smtp.mx,
    });
    const to = `inbox@${domain.name}`;

    const rounds = await inTurns(ROUNDS, async (round) => {
      const bareResult = await load(bare.port, to);
      console.log(`round ${round} bare smtp-server: ${fmt(bareResult)}`);
      const accepted = await load(system.smtp.mx, to);
      // Every message answered 250 (the warm-up's too) must come out as an event.
      const lag = await published(events, await acceptedSoFar(system.services['inbound-smtp'].url));
      console.log(
        `round ${round} inbound MX:       ${fmt(accepted)}; events published ${lag.toFixed(1)} s after the phase`,
      );
      return { bare: bareResult, mx: accepted, lag };
    });
    await events.close();
    const bareRate = median(rounds.map((r) => r.bare.rate));
    const mxRate = median(rounds.map((r) => r.mx.rate));
    console.log('');
    console.log(`${SIZE} B messages, ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} rounds (medians):`);
    console.log(`  bare smtp-server (ceiling): ${bareRate.toFixed(0)} msg/s`);
    console.log(
      `  inbound MX (accepted, parsed, authenticated, stored, event published): ${mxRate.toFixed(0)} msg/s (${((100 * mxRate) / bareRate).toFixed(0)}% of the ceiling)`,
    );
    console.log(
      `  p50 ${median(rounds.map((r) => r.mx.p50)).toFixed(1)} ms, p99 ${median(rounds.map((r) => r.mx.p99)).toFixed(1)} ms; relay lag after a phase ${median(rounds.map((r) => r.lag)).toFixed(1)} s`,
    );
  } finally {
    bare.child.kill('SIGTERM');
    await system.stop();
    await dns.close();
  }
}

if (args['bare-server']) {
  const bare = await startBareMx();
  console.log(`port ${bare.port}`);
  process.on('SIGTERM', () => void bare.close().then(() => process.exit(0)));
} else {
  await main();
}
