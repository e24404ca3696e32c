// Benchmark (run by hand, not a jest test): N timers due in the same second, fired by real scheduler
// processes (services/scheduler/src/main.ts), measured from the start of the due second until RabbitMQ
// holds every fired message in a queue bound to their routing key.
//
//   node tests/perf/scheduler-timers.ts [--timers 100000] [--replicas 1] [--via db|commands] [--lead-seconds 60] [--keep]
//
// --via db (default) stores the timers with setTimer, the db function the command consumer calls (minus
// the consumer's inbox row and AMQP round trip), 16 at a time; --via commands publishes real
// `scheduler.set-timer` commands and waits until the scheduler has stored them all.
// Uses DATABASE_URL and AMQP_URL (local defaults); creates and drops its own database and broker prefix.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { MessageEnvelope } from '@postline/contracts';
import {
  consumerQueueNames,
  createBroker,
  createDb,
  createLogger,
  DEFAULT_RETRY_POLICY,
  newId,
} from '@postline/platform';
import { createTestDatabase, freePort, uniqueName } from '@postline/testing';
import { SCHEMA } from '../../services/scheduler/src/config.ts';
import { migrate } from '../../services/scheduler/src/db/migrate.ts';
import type { SchedulerDb } from '../../services/scheduler/src/db/schema.ts';
import { countPendingTimers, setTimer } from '../../services/scheduler/src/db/timers.ts';
import { POLL_MS } from '../../services/scheduler/src/jobs/timer-firing.ts';
import { localInfra, log, sleep } from './harness.ts';

const { values: args } = parseArgs({
  options: {
    timers: { type: 'string', default: '100000' },
    replicas: { type: 'string', default: '1' },
    via: { type: 'string', default: 'db' },
    'lead-seconds': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const N = Number(args.timers);
const REPLICAS = Number(args.replicas);
const VIA = args.via === 'commands' ? 'commands' : 'db';
const LEAD_MS = Number(args['lead-seconds'] ?? (VIA === 'db' ? 60 : 150)) * 1000;
const SET_CONCURRENCY = 16;
const MAIN = fileURLToPath(new URL('../../services/scheduler/src/main.ts', import.meta.url));

// Redis is required by the test helpers, unused here.
const { amqpUrl } = localInfra();

const database = await createTestDatabase('perf');
const { db } = createDb<SchedulerDb>({ url: database.url, schema: SCHEMA, max: SET_CONCURRENCY });
await migrate(db);
const prefix = uniqueName('perf');
const broker = createBroker({ url: amqpUrl, prefix, logger: createLogger({ service: 'perf', level: 'warn' }) });
await broker.start();
const commandQueues = consumerQueueNames(prefix, 'scheduler', 'timer-commands', DEFAULT_RETRY_POLICY.tiersMs);
// Quorum like every real consumer queue: "published" means the broker confirmed a durable enqueue.
const countQueue = `${prefix}.perf.fired`;
await broker.withChannel(async (ch) => {
  await ch.assertQueue(countQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.bindQueue(countQueue, broker.exchanges.events, 'email.delivered');
});
const queueInfo = (queue: string) => broker.withChannel((ch) => ch.checkQueue(queue));

const replicas: { child: ChildProcess; url: string; output: string[] }[] = [];
let lastPublishedAt: number | undefined;
let received = 0;
const distinct = new Set<string>();
try {
  for (let i = 0; i < REPLICAS; i++) {
    const port = await freePort();
    const output: string[] = [];
    const child = spawn(process.execPath, [MAIN], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        BROKER_PREFIX: prefix,
        HTTP_PORT: String(port),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => output.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
    replicas.push({ child, url: `http://127.0.0.1:${port}`, output });
  }
  for (;;) {
    const dead = replicas.find((r) => r.child.exitCode !== null);
    if (dead) throw new Error(`scheduler exited:\n${dead.output.join('')}`);
    const consumers = await queueInfo(commandQueues.work).then(
      (q) => q.consumerCount,
      () => 0,
    );
    if (consumers >= REPLICAS) break;
    await sleep(100);
  }
  log(`${REPLICAS} scheduler replica(s) up (prefix ${prefix}, database ${database.name})`);

  // Every timer is due within one second: [dueSecond, dueSecond + 1 s).
  const dueSecond = Math.ceil((Date.now() + LEAD_MS) / 1000) * 1000;
  const dueAt = (i: number) => new Date(dueSecond + (i % 1000));
  const message = (): MessageEnvelope => ({
    id: newId(),
    type: 'email.delivered',
    version: 1,
    occurred_at: new Date().toISOString(),
    team_id: '0199a1b2-0000-7000-8000-000000000001',
    data: {
      email_id: newId(),
      created_at: new Date().toISOString(),
      from: 'Acme <news@acme.test>',
      to: ['someone@example.test'],
      subject: 'Benchmark',
    },
  });

  const setStarted = Date.now();
  if (VIA === 'db') {
    let next = 0;
    await Promise.all(
      Array.from({ length: SET_CONCURRENCY }, async () => {
        for (let i = next++; i < N; i = next++) {
          const m = message();
          await setTimer(
            db,
            { key: `perf-${i}`, dueAt: dueAt(i), routingKey: 'email.delivered', message: m, commandId: newId() },
            POLL_MS,
          );
        }
      }),
    );
  } else {
    for (let start = 0; start < N; start += 1000) {
      await Promise.all(
        Array.from({ length: Math.min(1000, N - start) }, async (_, j) => {
          const i = start + j;
          const id = newId();
          const data = {
            key: `perf-${i}`,
            due_at: dueAt(i).toISOString(),
            routing_key: 'email.delivered',
            message: message(),
          };
          const envelope = {
            id,
            type: 'scheduler.set-timer',
            version: 1,
            occurred_at: new Date().toISOString(),
            team_id: null,
            data,
          };
          const r = await broker.publish(
            broker.exchanges.commands,
            'scheduler.set-timer',
            Buffer.from(JSON.stringify(envelope)),
            {
              messageId: id,
              type: 'scheduler.set-timer',
            },
          );
          if (!r.ok) throw new Error(`publish failed: ${r.reason}`);
        }),
      );
    }
    while ((await countPendingTimers(db)) < N) await sleep(200);
  }
  const setSeconds = (Date.now() - setStarted) / 1000;
  log(
    `set ${N} timers via ${VIA === 'db' ? 'setTimer (db function)' : 'scheduler.set-timer commands'} in ${setSeconds.toFixed(1)} s (${Math.round(N / setSeconds)}/s)`,
  );
  if (Date.now() > dueSecond - 1000) throw new Error('setting took longer than the lead time; raise --lead-seconds');
  if ((await countPendingTimers(db)) !== N) throw new Error('not every timer is pending');
  log(`all ${N} timers pending, due in [${new Date(dueSecond).toISOString()}, +1 s); waiting`);

  await sleep(dueSecond - Date.now() - 200);
  let lastReport = 0;
  const deadline = dueSecond + 180_000;
  while (Date.now() < deadline) {
    const { messageCount } = await queueInfo(countQueue);
    if (messageCount >= N) {
      lastPublishedAt = Date.now();
      break;
    }
    if (Date.now() - lastReport >= 1000) {
      lastReport = Date.now();
      log(
        `+${((Date.now() - dueSecond) / 1000).toFixed(1)} s: ${messageCount} in the queue, ${await countPendingTimers(db)} pending`,
      );
    }
    await sleep(20);
  }

  const firedStats = await db
    .selectFrom('timers')
    .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('updated_at').as('last')])
    .where('state', '=', 'fired')
    .executeTakeFirstOrThrow();
  const metrics = await Promise.all(replicas.map((r) => fetch(`${r.url}/metrics`).then((res) => res.text())));

  if (lastPublishedAt !== undefined) {
    // Read everything back: each timer's message exactly once, by envelope id.
    await broker.withChannel(async (ch) => {
      await ch.prefetch(5000);
      await new Promise<void>((resolve) => {
        void ch.consume(countQueue, (msg) => {
          if (!msg) return;
          received++;
          distinct.add((JSON.parse(msg.content.toString('utf8')) as MessageEnvelope).id);
          ch.ack(msg);
          if (received >= N) resolve();
        });
      });
      await sleep(500); // a duplicate would arrive now
    });
  }

  console.log('\n== scheduler-timers benchmark ==');
  console.log(
    `timers: ${N}, due within one second starting ${new Date(dueSecond).toISOString()}; replicas: ${REPLICAS}; set via ${VIA}`,
  );
  if (lastPublishedAt === undefined) {
    console.log(`NOT DONE: the queue did not reach ${N} messages within 180 s`);
  } else {
    const seconds = (lastPublishedAt - dueSecond) / 1000;
    console.log(
      `fired and published: ${N} in ${seconds.toFixed(2)} s from the start of the due second (${Math.round(N / seconds)}/s)`,
    );
    console.log(
      '  measured: wall clock from the due second until a quorum queue bound to email.delivered reported ' +
        `${N} messages (checkQueue polled every 20 ms; every publish is confirmed by the broker)`,
    );
  }
  const dbSeconds = (d: unknown) => (d instanceof Date ? ((d.getTime() - dueSecond) / 1000).toFixed(2) : 'n/a');
  console.log(
    `  database clock: last timer fired (outbox commit) at +${dbSeconds(firedStats.last)} s; timers fired: ${firedStats.n}`,
  );
  console.log(`  read back from the queue: ${received} messages, ${distinct.size} distinct envelope ids`);
  const sum = (name: string) =>
    metrics.reduce((total, text) => {
      for (const line of text.split('\n'))
        if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) total += Number(line.split(' ').pop());
      return total;
    }, 0);
  console.log(
    `  scheduler metrics: fired_total ${sum('scheduler_timers_fired_total')}, lag observations ${sum('scheduler_timer_lag_seconds_count')}, mean lag ${(sum('scheduler_timer_lag_seconds_sum') / sum('scheduler_timer_lag_seconds_count')).toFixed(2)} s`,
  );
} finally {
  for (const r of replicas) r.child.kill('SIGTERM');
  await Promise.all(
    replicas.map(
      (r) => new Promise((resolve) => (r.child.exitCode !== null ? resolve(null) : r.child.once('exit', resolve))),
    ),
  );
  if (!args.keep) {
    await broker.withChannel(async (ch) => {
      for (const q of [
        countQueue,
        commandQueues.work,
        commandQueues.dead,
        ...commandQueues.tiers.map((t) => t.queue),
        `${prefix}.unroutable`,
      ])
        await ch.deleteQueue(q);
      for (const ex of ['events', 'commands', 'unroutable']) await ch.deleteExchange(`${prefix}.${ex}`);
    });
  }
  await broker.stop();
  await db.destroy();
  if (!args.keep) await database.drop();
}
process.exitCode = lastPublishedAt !== undefined && distinct.size === N && received === N ? 0 : 1;
