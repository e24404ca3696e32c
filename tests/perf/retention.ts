// Benchmark (run by hand, not a jest test): the bytes Postgres keeps per email, and how fast the retention
// job deletes them, through the real system.
//
//   node tests/perf/retention.ts [--emails 2000] [--kb 10]
//
// Storage: `emails` emails of a `kb` KB HTML body (a receipt, each its own), each to one recipient at a
// local sink MX, accepted with POST /emails (8 requests in flight, each logged), delivered, with their events (sent,
// delivered) both kept by the sender and delivered to one webhook endpoint (a local receiver answering
// 200). Before and after, the size of every table of the sender, the gateway and the webhook-dispatcher
// with its indexes and TOAST (pg_total_relation_size); the figure is the difference / emails per table and
// for the rows kept with the email (all but the outboxes' and inboxes', which go within a day and whose
// space is reused), with the dead rows the updates left, as a running install holds them before autovacuum
// reuses their space.
// Pruning: the same emails, their request logs and webhook events backdated 40 days, then the services'
// own retention rules (senderRetainedTables, DISPATCHER_RETAINED_TABLES, request_logs) run once from this
// process against the system's database (the services' own jobs wait 10 minutes before their first run);
// the figure is rows deleted (children included) per second, and emails per second.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { Resend } from 'resend';
import { createDb, createLogger, createMetrics, createRetentionPruner } from '@postline/platform';
import { createVerifiedDomain, startDeliveringSystem } from '@postline/testing';
import { DISPATCHER_RETAINED_TABLES } from '../../services/webhook-dispatcher/src/db/retention.ts';
import { senderRetainedTables } from '../../services/sender/src/retention/tables.ts';
import type { SenderDb } from '../../services/sender/src/db/schema.ts';
import { localInfra, log, settled } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    emails: { type: 'string', default: '2000' },
    kb: { type: 'string', default: '10' },
  },
});
const N = Number(args.emails);
const KB = Number(args.kb);
const RCPT = 'sink.test';
const CONCURRENCY = 8;
const SCHEMAS = ['sender', 'gateway', 'webhook_dispatcher'];

// An order confirmation of about `kb` KB, each its own: rows of a table with random SKUs, quantities and
// prices (compressing as a real receipt does, not as one repeated line would).
const PRODUCTS = ['Blue widget', 'Steel bracket', 'Oak shelf', 'Cotton throw', 'Desk lamp', 'Glass jar', 'Wool socks'];
function receipt(order: number): string {
  let html = `<html><body><p>Thanks for your order #${order}. Your receipt is below.</p><table>`;
  while (html.length < KB * 1024 - 30) {
    const sku = randomBytes(4).toString('hex').toUpperCase();
    const n = randomBytes(2);
    html += `<tr><td>${PRODUCTS[(n[0] ?? 0) % PRODUCTS.length]}</td><td>SKU ${sku}</td><td>${((n[1] ?? 0) % 5) + 1}</td><td>$${(((n[0] ?? 0) * 7 + (n[1] ?? 0)) / 10).toFixed(2)}</td></tr>`;
  }
  return `${html}</table></body></html>`;
}

const webhook = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200).end());
});
await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
const webhookPort = (webhook.address() as { port: number }).port;

const { dns, sink, system } = await startDeliveringSystem(RCPT, {
  RATE_LIMIT_PER_SECOND: '1000000',
  LOG_LEVEL: 'warn',
});
const client = new pg.Client({ connectionString: system.env.DATABASE_URL });
await client.connect();

/** Bytes of each table of the schemas (with indexes and TOAST), by `schema.table`. */
async function sizes(): Promise<Map<string, number>> {
  const { rows } = await client.query<{ name: string; bytes: string }>(
    `select n.nspname || '.' || c.relname as name, pg_total_relation_size(c.oid) as bytes
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relkind = 'r' and n.nspname = any($1)`,
    [SCHEMAS],
  );
  return new Map(rows.map((r) => [r.name, Number(r.bytes)]));
}

const count = async (query: string, params: unknown[] = []) =>
  Number((await client.query<{ n: string }>(query, params)).rows[0]?.n ?? 0);

try {
  const team = await system.admin('team', 'create', '--name', 'Retention bench');
  const teamId = String(team.team_id);
  const resend = new Resend(String(team.api_key), { baseUrl: system.apiUrl });
  const domain = await createVerifiedDomain({
    resend,
    dns,
    env: system.env,
    name: `ret${Date.now().toString(36)}.example.com`,
  });
  const hook = await resend.webhooks.create({
    endpoint: `http://127.0.0.1:${webhookPort}/hook`,
    events: ['email.sent', 'email.delivered'],
  });
  if (hook.error) throw new Error(JSON.stringify(hook.error));
  const emailsBefore = await count(`select count(*) as n from sender.emails where team_id = $1`, [teamId]);
  const eventsBefore = await count(`select count(*) as n from webhook_dispatcher.webhook_events where team_id = $1`, [
    teamId,
  ]);
  const before = await sizes();

  log(`sending ${N} emails of ${KB} KB HTML to one recipient each, ${CONCURRENCY} requests in flight`);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < N) {
        const i = next++;
        const { error } = await resend.emails.send({
          from: `Acme <orders@${domain.name}>`,
          to: [`buyer${i}@${RCPT}`],
          subject: `Your order #${100000 + i}`,
          html: receipt(100000 + i),
          tags: [{ name: 'kind', value: 'receipt' }],
        });
        if (error) throw new Error(JSON.stringify(error));
      }
    }),
  );
  // Each counted down to none left: the domain's probe email may add one more to what is counted.
  const deliveredLeft = async () =>
    N +
    emailsBefore -
    (await count(
      `select count(*) as n from sender.recipients r join sender.emails e on e.id = r.email_id
       where e.team_id = $1 and r.status = 'delivered'`,
      [teamId],
    ));
  const webhooksLeft = async () =>
    2 * N +
    eventsBefore -
    (await count(
      `select count(*) as n from webhook_dispatcher.webhook_events where team_id = $1 and status = 'success'`,
      [teamId],
    ));
  await settled(async () => Math.max(0, await deliveredLeft()), 'the deliveries');
  await settled(async () => Math.max(0, await webhooksLeft()), 'the webhook deliveries');
  await settled(
    async () =>
      (await count(`select count(*) as n from sender.outbox`)) +
      (await count(`select count(*) as n from webhook_dispatcher.outbox`)),
    'the outboxes',
  );
  log(`delivered: ${sink.messages.length} messages at the sink`);
  const after = await sizes();
  const deltas = [...after]
    .map(([name, bytes]) => ({ name, bytes: bytes - (before.get(name) ?? 0) }))
    .filter((d) => d.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  // The outboxes' and inboxes' rows go within a day (most at once): their space is reused, not kept per email.
  const transient = (name: string) => /\.(outbox|inbox)$/.test(name);
  const kept = deltas.filter((d) => !transient(d.name)).reduce((sum, d) => sum + d.bytes, 0);
  const passing = deltas.filter((d) => transient(d.name)).reduce((sum, d) => sum + d.bytes, 0);
  console.log(`\nStorage after ${N} emails (${KB} KB HTML, one recipient, sent + delivered events, one webhook):`);
  for (const d of deltas) console.log(`  ${d.name.padEnd(40)} ${(d.bytes / N).toFixed(0).padStart(7)} B/email`);
  console.log(`  ${'kept with the email'.padEnd(40)} ${(kept / N).toFixed(0).padStart(7)} B/email`);
  console.log(`  ${'outboxes and inboxes (reused space)'.padEnd(40)} ${(passing / N).toFixed(0).padStart(7)} B/email`);

  // Pruning: every row of the team backdated past the default 30 days, then one run of the services' rules.
  await client.query(`update sender.emails set created_at = now() - interval '40 days' where team_id = $1`, [teamId]);
  await client.query(`update gateway.request_logs set created_at = now() - interval '40 days' where team_id = $1`, [
    teamId,
  ]);
  await client.query(
    `update webhook_dispatcher.webhook_events set created_at = now() - interval '40 days' where team_id = $1`,
    [teamId],
  );
  const logger = createLogger({ service: 'retention-bench', level: 'warn' });
  const url = String(system.env.DATABASE_URL);
  const senderDb = createDb<SenderDb>({ url, schema: 'sender', max: 2 }).db;
  const dispatcherDb = createDb<unknown>({ url, schema: 'webhook_dispatcher', max: 2 }).db;
  const gatewayDb = createDb<unknown>({ url, schema: 'gateway', max: 2 }).db;
  // The bench team has the default retention (the gateway's teams table and the owners' read models agree).
  const byDefault = () => Promise.resolve(new Map<string, number>());
  const runs = [
    { name: 'sender', db: senderDb as Kysely<unknown>, tables: senderRetainedTables(senderDb) },
    { name: 'webhook-dispatcher', db: dispatcherDb, tables: DISPATCHER_RETAINED_TABLES },
    { name: 'api-gateway', db: gatewayDb, tables: [{ table: 'request_logs', time: 'created_at' }] },
  ];
  let rows = 0;
  let seconds = 0;
  for (const run of runs) {
    const pruner = createRetentionPruner({
      db: run.db,
      logger,
      registry: createMetrics('retention-bench').registry,
      everyMs: 60_000,
      tables: run.tables,
      retentionOf: byDefault,
    });
    const started = performance.now();
    const counts = await pruner.runOnce();
    const took = (performance.now() - started) / 1000;
    const deleted = Object.values(counts).reduce((sum, n) => sum + n, 0);
    rows += deleted;
    seconds += took;
    console.log(`  ${run.name}: ${deleted} rows in ${took.toFixed(2)} s ${JSON.stringify(counts)}`);
  }
  await Promise.all([senderDb.destroy(), dispatcherDb.destroy(), gatewayDb.destroy()]);
  console.log(
    `\nPruning: ${rows} rows in ${seconds.toFixed(2)} s: ${(rows / seconds).toFixed(0)} rows/s, ${(N / seconds).toFixed(0)} emails/s (with their rows)`,
  );
} finally {
  await client.end();
  await system.stop();
  await Promise.all([sink.close(), dns.close()]);
  webhook.close();
}
