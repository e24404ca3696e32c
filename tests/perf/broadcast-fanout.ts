// Benchmark (run by hand, not a jest test): a broadcast to a large segment, through the real gateway and
// sender, while POST /emails keeps being answered.
//
//   node tests/perf/broadcast-fanout.ts [--contacts 100000] [--concurrency 4] [--idle-seconds 10]
//
// One team gets `--contacts` contacts at the sandbox domain (delivered+<n>@postline.test: delivery costs
// no network), all in one segment, written straight into the sender's tables as an import would leave them.
// A closed loop of `--concurrency` POST /emails runs first alone for `--idle-seconds` (the idle p99), then
// the broadcast is sent and the loop goes on until every recipient's email is accepted (written queued,
// with its delivery command in the outbox). The figures: the time from send to the last email accepted
// (target ≤ 60 s), and POST /emails's p99 during the fan-out beside its idle p99.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Pool } from 'undici';
import { Resend } from 'resend';
import { createVerifiedDomain, observeBroker, startDnsServer, startSystem } from '@postline/testing';
import { closedLoop, localInfra, log, type LoadResult } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    contacts: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '4' },
    'idle-seconds': { type: 'string', default: '10' },
  },
});
const CONTACTS = Number(args.contacts);
const CONCURRENCY = Number(args.concurrency);
const IDLE_SECONDS = Number(args['idle-seconds']);

/** A closed loop of POST /emails, with no warm-up, for `window`; a refused request stops the run. */
async function emailLoop(
  origin: string,
  apiKey: string,
  from: string,
  window: { seconds: number } | { until: Promise<unknown> },
): Promise<LoadResult> {
  const http = new Pool(origin, { connections: CONCURRENCY });
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'user-agent': 'broadcast-fanout-benchmark',
    'content-type': 'application/json',
  };
  const body = JSON.stringify({
    from: `Acme <hello@${from}>`,
    to: ['delivered@postline.test'],
    subject: 'Receipt',
    html: '<p>Thanks.</p>',
  });
  try {
    return await closedLoop({
      concurrency: CONCURRENCY,
      warmUp: 0,
      window,
      turn: async () => {
        const res = await http.request({ method: 'POST', path: '/emails', headers, body });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`POST /emails: ${res.statusCode} ${text.slice(0, 200)}`);
        return { ok: true };
      },
    });
  } finally {
    await http.close();
  }
}

const dns = await startDnsServer();
const system = await startSystem({ DNS_SERVERS: dns.address, RATE_LIMIT_PER_SECOND: '1000000', LOG_LEVEL: 'warn' });
const client = new pg.Client({ connectionString: system.env.DATABASE_URL });
await client.connect();
try {
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const { api_key: apiKey, team_id: teamId } = await system.admin('team', 'create', '--name', 'Bench');
  const resend = new Resend(String(apiKey), { baseUrl: system.apiUrl });
  const domain = await createVerifiedDomain({
    resend,
    dns,
    events,
    name: `fanout${Date.now().toString(36)}.example.com`,
  });
  await events.close();
  const segment = await resend.segments.create({ name: 'Everyone' });
  if (!segment.data) throw new Error(`segment: ${JSON.stringify(segment.error)}`);
  const segmentId = segment.data.id;
  for (let start = 0; start < CONTACTS; start += 100_000) {
    const end = Math.min(CONTACTS, start + 100_000);
    await client.query(
      `with made as (
         insert into sender.contacts (id, team_id, email, first_name, properties, created_at, updated_at)
         select (lpad(to_hex(1700000000000 + n), 12, '0') || '7' || substr(md5(n::text), 1, 3) || '8' || substr(md5(n::text), 4, 15))::uuid,
                $1::uuid, 'delivered+' || n || '@postline.test', 'Contact ' || n, '{}', now(), now()
         from generate_series($3::int, $4::int - 1) as n
         returning id)
       insert into sender.contact_segments (segment_id, contact_id, team_id) select $2::uuid, id, $1::uuid from made`,
      [teamId, segmentId, start, end],
    );
  }
  await client.query('analyze sender.contacts, sender.contact_segments');
  log(`${CONTACTS} contacts in the segment`);

  const origin = new URL(system.apiUrl).origin;
  const idle = await emailLoop(origin, String(apiKey), domain.name, { seconds: IDLE_SECONDS });
  log(`idle: ${idle.count} POST /emails`);

  const created = await resend.broadcasts.create({
    segmentId,
    from: `News <news@${domain.name}>`,
    subject: 'Hello {{{contact.first_name|there}}}',
    html: '<p>Hi {{{contact.first_name|there}}}, news. <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
    send: true,
  });
  if (!created.data) throw new Error(`broadcast: ${JSON.stringify(created.error)}`);
  const broadcastId = created.data.id;
  const started = performance.now();
  let elapsed = NaN;
  const watch = (async () => {
    for (;;) {
      const { rows } = await client.query<{ status: string; emails: string }>(
        `select b.status, (select count(*) from sender.broadcast_recipients r where r.broadcast_id = b.id and r.email_id is not null) as emails
         from sender.broadcasts b where b.id = $1`,
        [broadcastId],
      );
      if (rows[0]?.status === 'sent' && Number(rows[0].emails) >= CONTACTS) {
        elapsed = (performance.now() - started) / 1000;
        return;
      } else if (performance.now() - started > 300_000) {
        throw new Error(`not done after 300 s: ${JSON.stringify(rows[0])}`);
      } else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const during = await emailLoop(origin, String(apiKey), domain.name, { until: watch });
  await watch;

  console.log(`\n== broadcast-fanout benchmark ==`);
  console.log(
    `${CONTACTS} recipients' emails accepted (queued) ${elapsed.toFixed(1)} s after send (target ≤ 60 s): ${(CONTACTS / elapsed).toFixed(0)} emails/s`,
  );
  console.log(
    `POST /emails (closed loop of ${CONCURRENCY}): p99 ${idle.p99.toFixed(1)} ms idle (p50 ${idle.p50.toFixed(1)}, ${idle.count} requests), p99 ${during.p99.toFixed(1)} ms during the fan-out (p50 ${during.p50.toFixed(1)}, ${during.count} requests)`,
  );
} finally {
  await client.end();
  await system.stop();
  await dns.close();
}
