// Benchmark (run by hand, not a jest test): what the traffic shaping per mailbox provider costs delivery
// when nothing is throttled, and whether a provider that pushes back slows delivery to the others. Each part
// starts whole systems delivering through a local DNS server to local smtp-server MXs.
//
//   node tests/perf/shaping.ts cost [--emails 4000] [--rounds 5] [--unshaped-from <checkout>]
//   node tests/perf/shaping.ts isolation [--emails 2000] [--rounds 5] [--take 200]
//
// cost: two systems side by side, taking turns, each delivering bursts of `emails` emails (POST /emails/batch,
// 100 a request, 4 in flight) to one sink MX of a plain MX domain, whose default limits (20 sessions,
// 600,000 messages a minute) do not bind at this load. "shaped" is this checkout as shipped. "unshaped" is
// this checkout with limits that cannot bind (a SHAPING_CONFIG of a million sessions and 10^12 messages a
// minute: what the limits cost), or with --unshaped-from, another checkout (the commit before the shaping,
// its dependencies installed) with the same environment: what the shaping's code costs. A burst's figure is
// emails / (last message at the sink − first request sent); the rounds alternate which side goes first, and
// the cost is 1 − the median over the rounds of shaped / unshaped. The script also times the shaping's own
// work for one delivery in this process (keyOf, held, admit, and done with signalOf's reading of the outcome).
//
// isolation: one system and two providers, each with its sink MX on its own loopback address, found through
// the local DNS server: a plain MX domain ("healthy") and a domain whose MX has Gmail's host name, so that
// the gmail limits and back-off apply. Gmail's rate is raised so that only its pushback can slow it
// (SHAPING_CONFIG); the back-off is as shipped, its holds times POSTLINE_DELAY_SCALE 0.01 (3 s for the
// first). Three sides take turns, each `emails` emails to the healthy domain: alone; beside as many to Gmail
// taking everything; beside as many to Gmail answering `421 4.7.28` to MAIL FROM once it took `take`. The
// figure is the healthy provider's rate: its emails / (its last message at its sink − first request sent).
// After each side Gmail takes everything again and its mail is delivered before the next side starts.
//
// With PROFILE_DIR, every service writes its CPU profile when it stops, under <PROFILE_DIR>/<side>.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Resend } from 'resend';
import {
  createVerifiedDomain,
  startDnsServer,
  startSinkMx,
  startSystem,
  type DnsServer,
  type SinkMx,
  type System,
} from '@postline/testing';
import { createShaper, DEFAULT_SHAPING, signalOf } from '../../services/sender/src/delivery/smtp/shaping.ts';
import {
  acceptInBatches,
  deliveryDrained,
  inTurns,
  localInfra,
  log,
  metricSum,
  middle,
  profileEnv,
  sleep,
} from './harness.ts';

localInfra();

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    emails: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    take: { type: 'string', default: '200' },
    'unshaped-from': { type: 'string' },
  },
});
const part = positionals[0];
if (part !== 'cost' && part !== 'isolation') throw new Error('usage: node tests/perf/shaping.ts cost|isolation …');
const N = Number(args.emails ?? (part === 'cost' ? 4000 : 2000));
const ROUNDS = Number(args.rounds);
const TAKE = Number(args.take);
const html = '<p>Thanks for your order. Your receipt is below.</p><table><tr><td>Widget</td><td>$10</td></tr></table>';
const GMAIL_MX = 'gmail-smtp-in.l.google.com';

/** A started system with a team and a verified sending domain. */
type Bench = { name: string; system: System; resend: Resend; from: string };

async function startBench(
  name: string,
  start: typeof startSystem,
  dns: DnsServer,
  env: NodeJS.ProcessEnv,
): Promise<Bench> {
  const system = await start({
    DNS_SERVERS: dns.address,
    RATE_LIMIT_PER_SECOND: '1000000',
    LOG_LEVEL: 'warn',
    ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
    ...profileEnv(name),
    ...env,
  });
  try {
    const { api_key: apiKey } = await system.admin('team', 'create', '--name', name);
    const resend = new Resend(String(apiKey), { baseUrl: system.apiUrl });
    const domain = await createVerifiedDomain({
      resend,
      dns,
      env: system.env,
      name: `${name}${Date.now().toString(36)}.example.com`,
    });
    return { name, system, resend, from: `Acme <hello@${domain.name}>` };
  } catch (err) {
    await system.stop();
    throw err;
  }
}

/** Waits until the sink has no session open (the sender closes idle ones after 2 s): each burst starts alike. */
async function sinkIdle(sink: SinkMx): Promise<void> {
  while (sink.openSessions() > 0) await sleep(20);
}

/** A JSON file in a new temporary directory, for SHAPING_CONFIG. */
function shapingFile(content: object): string {
  const path = join(mkdtempSync(join(tmpdir(), 'shaping-bench-')), 'shaping.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

/** Microseconds of the shaping's own work for one delivery that goes through, as the MTA does it. */
async function shapingWorkMicros(mx: string): Promise<number> {
  // A clock 1 ms on per call: the default rate's bucket refills faster than the loop takes turns, so no turn waits.
  let clock = Date.now();
  const shaper = createShaper({ config: DEFAULT_SHAPING, now: () => (clock += 1) });
  const outcome = [{ status: 'delivered', code: 250, response: '250 2.0.0 OK', mx }];
  const once = async () => {
    // Asked before the message is made (Mta.held), then for the turn.
    if (shaper.held(shaper.keyOf(mx))) throw new Error('held');
    const turn = await shaper.admit(shaper.keyOf(mx), 300_000);
    if (turn.kind !== 'go') throw new Error(`no turn: ${turn.reason}`);
    turn.done(signalOf(outcome));
  };
  for (let i = 0; i < 20_000; i++) await once();
  const calls = 200_000;
  const started = performance.now();
  for (let i = 0; i < calls; i++) await once();
  return ((performance.now() - started) * 1000) / calls;
}

const pct = (x: number, digits = 1) => `${(100 * x).toFixed(digits)}%`;

async function cost(): Promise<void> {
  const RCPT = 'sink.test';
  const sink = await startSinkMx();
  const dns = await startDnsServer();
  dns.set(RCPT, [{ type: 'MX', exchange: `mx.${RCPT}`, priority: 10 }]);
  dns.set(`mx.${RCPT}`, [{ type: 'A', address: sink.host }]);
  const env = { MX_DELIVERY_PORT: String(sink.port) };
  const checkout = args['unshaped-from'];
  const unshapedStart = checkout
    ? (
        (await import(pathToFileURL(join(resolve(checkout), 'libs/testing/src/index.ts')).href)) as {
          startSystem: typeof startSystem;
        }
      ).startSystem
    : startSystem;
  const unbound = { maxConnections: 1_000_000, messagesPerMinute: 1e12 };
  const unshapedEnv = checkout
    ? env
    : {
        ...env,
        SHAPING_CONFIG: shapingFile({
          providers: { gmail: unbound, microsoft: unbound, yahoo: unbound, apple: unbound, other: unbound },
        }),
      };
  const benches: Bench[] = [];
  try {
    benches.push(await startBench('shaped', startSystem, dns, env));
    benches.push(await startBench('unshaped', unshapedStart, dns, unshapedEnv));
    log(`unshaped: ${checkout ? `the checkout at ${checkout}` : 'this checkout, limits that cannot bind'}`);

    /** `N` (or `count`) emails accepted until the last reaches the sink; emails/s. */
    const burst = async (bench: Bench, label: string, count = N) => {
      await sinkIdle(sink);
      sink.messages.length = 0;
      const start = Date.now();
      await acceptInBatches(bench.resend, count, (i) => ({
        from: bench.from,
        to: `${label}.${i}@${RCPT}`,
        subject: 'Your receipt',
        html,
      }));
      const arrived = await sink.waitForMessages(count, 600_000);
      const rate = count / ((Math.max(...arrived.map((m) => m.at)) - start) / 1000);
      await deliveryDrained(bench.system);
      return rate;
    };
    for (const bench of benches) await burst(bench, `warm-${bench.name}`, Math.ceil(N / 4));

    const rounds = await inTurns(ROUNDS, async (round) => {
      const order = round % 2 ? benches : [...benches].reverse();
      const rates: Record<string, number> = {};
      for (const bench of order) rates[bench.name] = await burst(bench, `r${round}-${bench.name}`);
      const shaped = rates.shaped as number;
      const unshaped = rates.unshaped as number;
      log(
        `round ${round} (${order.map((b) => b.name).join(' first, ')} second): shaped ${shaped.toFixed(0)} emails/s, ` +
          `unshaped ${unshaped.toFixed(0)} emails/s → ${(shaped / unshaped).toFixed(3)}`,
      );
      return { shaped, unshaped, ratio: shaped / unshaped };
    });
    const shaped = middle(rounds.map((r) => r.shaped));
    const ratio = middle(rounds.map((r) => r.ratio));
    log(
      `median of ${ROUNDS} rounds: shaped ${shaped.toFixed(0)} emails/s, unshaped ${middle(rounds.map((r) => r.unshaped)).toFixed(0)} emails/s; ` +
        `shaped/unshaped ${ratio.toFixed(3)} (rounds ${rounds.map((r) => r.ratio.toFixed(3)).join(', ')}): ` +
        `the shaping costs ${pct(1 - ratio)} (target ≤ 5%)`,
    );
    const micros = await shapingWorkMicros(`mx.${RCPT}`);
    log(
      `the shaping's own work: ${micros.toFixed(2)} µs a delivery in this process; at ${shaped.toFixed(0)} emails/s ` +
        `that is ${pct((micros * shaped) / 1e6, 2)} of one core`,
    );
  } finally {
    for (const bench of benches) await bench.system.stop();
    await sink.close();
    await dns.close();
  }
}

async function isolation(): Promise<void> {
  const HEALTHY = 'healthy.test';
  const GMAIL = 'gmail-users.test';
  const healthy = await startSinkMx({ host: '127.0.0.81' });
  let pushingBack = false;
  const gmail: SinkMx = await startSinkMx({
    host: '127.0.0.82',
    port: healthy.port,
    mailFrom: () =>
      pushingBack && gmail.messages.length >= TAKE
        ? { code: 421, message: '4.7.28 Our system has detected an unusual rate of unsolicited mail' }
        : undefined,
  });
  const dns = await startDnsServer();
  dns.set(HEALTHY, [{ type: 'MX', exchange: `mx.${HEALTHY}`, priority: 10 }]);
  dns.set(`mx.${HEALTHY}`, [{ type: 'A', address: healthy.host }]);
  dns.set(GMAIL, [{ type: 'MX', exchange: GMAIL_MX, priority: 5 }]);
  dns.set(GMAIL_MX, [{ type: 'A', address: gmail.host }]);
  let bench: Bench | undefined;
  try {
    bench = await startBench('isolation', startSystem, dns, {
      MX_DELIVERY_PORT: String(healthy.port),
      POSTLINE_DELAY_SCALE: '0.01',
      SHAPING_CONFIG: shapingFile({ providers: { gmail: { messagesPerMinute: 600_000 } } }),
    });
    const { system, resend, from } = bench;
    const gmailEvents = (event: string) =>
      metricSum(
        system.services.sender.url,
        'smtp_provider_shaping_events_total',
        (l) => l.includes('provider="gmail"') && l.includes(`event="${event}"`),
      );

    type Side = 'alone' | 'beside Gmail taking everything' | 'beside Gmail pushing back';
    const side = async (kind: Side, label: string) => {
      await sinkIdle(healthy);
      await sinkIdle(gmail);
      healthy.messages.length = 0;
      gmail.messages.length = 0;
      pushingBack = kind === 'beside Gmail pushing back';
      const withGmail = kind !== 'alone';
      const [throttledBefore, heldBefore] = [await gmailEvents('throttled'), await gmailEvents('held')];
      const connectionsBefore = gmail.connections();
      const start = Date.now();
      await acceptInBatches(resend, withGmail ? 2 * N : N, (i) => ({
        from,
        to: `${label}.${i}@${withGmail && i % 2 ? GMAIL : HEALTHY}`,
        subject: 'Your receipt',
        html,
      }));
      const arrived = await healthy.waitForMessages(N, 600_000);
      const rate = N / ((Math.max(...arrived.map((m) => m.at)) - start) / 1000);
      const gmailMeanwhile = {
        delivered: gmail.messages.length,
        throttled: (await gmailEvents('throttled')) - throttledBefore,
        holds: (await gmailEvents('held')) - heldBefore,
        sessions: gmail.connections() - connectionsBefore,
      };
      // Gmail takes everything again; its held and deferred mail goes before the next side starts.
      pushingBack = false;
      if (withGmail) await gmail.waitForMessages(N, 600_000);
      await deliveryDrained(system);
      return { rate, gmail: gmailMeanwhile, gmailDoneSeconds: (Date.now() - start) / 1000 };
    };

    const sides: Side[] = ['alone', 'beside Gmail taking everything', 'beside Gmail pushing back'];
    await side('alone', 'warm');
    const rounds = await inTurns(ROUNDS, async (round) => {
      // Each side first, second and third in turn over the rounds.
      const order = sides.map((_, i) => sides[(i + round - 1) % sides.length] as Side);
      const results = new Map<Side, Awaited<ReturnType<typeof side>>>();
      for (const [i, kind] of order.entries()) results.set(kind, await side(kind, `r${round}s${i}`));
      const pushed = results.get('beside Gmail pushing back')!;
      log(
        `round ${round}: healthy provider ${sides.map((k) => `${k} ${results.get(k)!.rate.toFixed(0)}`).join(', ')} emails/s; ` +
          `the pushing-back Gmail meanwhile took ${pushed.gmail.delivered}, held ${pushed.gmail.holds} time(s), ` +
          `deferred ${pushed.gmail.throttled} deliveries without a connection, ${pushed.gmail.sessions} sessions; ` +
          `all its mail delivered ${pushed.gmailDoneSeconds.toFixed(1)} s after the start`,
      );
      return Object.fromEntries(sides.map((k) => [k, results.get(k)!.rate])) as Record<Side, number>;
    });
    const med = (k: Side) => middle(rounds.map((r) => r[k]));
    const vsHealthy = middle(rounds.map((r) => r['beside Gmail pushing back'] / r['beside Gmail taking everything']));
    const vsAlone = middle(rounds.map((r) => r['beside Gmail pushing back'] / r.alone));
    log(
      `median of ${ROUNDS} rounds, the healthy provider: ${sides.map((k) => `${k} ${med(k).toFixed(0)}`).join(', ')} emails/s; ` +
        `beside Gmail pushing back against beside Gmail taking everything ${vsHealthy.toFixed(3)}, against alone ${vsAlone.toFixed(3)}`,
    );
  } finally {
    await bench?.system.stop();
    await Promise.all([healthy.close(), gmail.close(), dns.close()]);
  }
}

await (part === 'cost' ? cost() : isolation());
