// Benchmark (run by hand, not a jest test): GET /emails with each of its filters, and GET /emails/metrics,
// for a team with a million emails against a team with ten thousand, through the real gateway and sender.
//
//   node tests/perf/email-queries.ts [--large 1000000] [--small 10000] [--rounds 30] [--addresses 5000] [--subjects 1000]
//     [--same-matches]
//
// Each team's emails are written straight into the tables as the services leave them, spread over the last
// 30 days (ids in creation order, as UUIDv7 makes them): one recipient each (--addresses addresses in turn),
// 10 senders, subjects "Invoice <n % --subjects, 7 digits>", a tag, two sending domains, two API keys, one email in 100 from a
// broadcast, last events as a day of mail ends them (mostly delivered). The large team's metric counters
// are what the outbox's trigger would have kept for its emails (one row per hour, domain, provider and
// metric). Both teams are in the same tables, as on a shared install.
//
// Figures, the median of `rounds` answers read whole, the two teams taking turns:
//   - GET /emails?limit=100 with no filter and with each filter: p50 at --large against p50 at --small
//     (target ≤ 1.5×). With --same-matches the large team cycles through --large/--small times as many
//     addresses and subjects, so that the recipient and subject asked for match as many emails in both teams
//     (a page of the same size): what the table's size costs, apart from how many rows a value finds;
//   - GET /emails/metrics for 30 days, daily, split by period: p50 at --large (target ≤ 100 ms); also split
//     by domain and by provider.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startSystem } from '@postline/testing';
import { localInfra, log, percentile } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    large: { type: 'string', default: '1000000' },
    small: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '30' },
    // How many distinct recipients and subjects the emails cycle through (each matches rows / this many).
    addresses: { type: 'string', default: '5000' },
    subjects: { type: 'string', default: '1000' },
    'same-matches': { type: 'boolean', default: false },
  },
});
const ADDRESSES = Number(args.addresses);
const SUBJECTS = Number(args.subjects);
const LARGE = Number(args.large);
const SMALL = Number(args.small);
const ROUNDS = Number(args.rounds);
const BATCH = 100_000;
const DAY_MS = 86_400_000;
const NIL = '00000000-0000-0000-0000-000000000000';

const system = await startSystem({ RATE_LIMIT_PER_SECOND: '100000' });
const client = new pg.Client({ connectionString: system.env.DATABASE_URL });
await client.connect();

type Team = {
  name: string;
  rows: number;
  teamId: string;
  apiKey: string;
  keys: string[];
  domains: string[];
  broadcast: string;
};

async function seedTeam(name: string, rows: number, valueScale: number): Promise<Team> {
  const addresses = ADDRESSES * valueScale;
  const subjects = SUBJECTS * valueScale;
  const team = await system.admin('team', 'create', '--name', name);
  const teamId = String(team.team_id);
  const keys = [crypto.randomUUID(), crypto.randomUUID()];
  const domains = [crypto.randomUUID(), crypto.randomUUID()];
  const broadcast = crypto.randomUUID();
  const end = Date.now() - 60_000;
  const step = (30 * DAY_MS) / rows;
  // Milliseconds of email n, and an id in UUIDv7's layout with those milliseconds (unique per team by its salt).
  const ms = `(${end - 30 * DAY_MS}::bigint + floor(n::bigint * ${step})::bigint)`;
  const id = `(lpad(to_hex(${ms}), 12, '0') || '7' || substr(md5($1::text || n), 1, 3) || '8' || substr(md5($1::text || n), 4, 15))::uuid`;
  for (let from = 1; from <= rows; from += BATCH) {
    const to = Math.min(rows, from + BATCH - 1);
    await client.query(
      `with e as (
         insert into sender.emails (id, team_id, domain_id, from_header, from_address, from_domain, to_addresses,
           cc_addresses, bcc_addresses, reply_to, subject, html, text, headers, tags, message_id, status, last_event,
           created_at, broadcast_id, api_key_id)
         select ${id}, $1::uuid, ($4::uuid[])[1 + n % 2], 'Acme <s' || n % 10 || '@example.com>', 's' || n % 10 || '@example.com',
           'example.com', array['reader' || n % ${addresses} || '@example.org'], '{}', '{}', '{}', 'Invoice ' || lpad((n % ${subjects})::text, 7, '0'),
           '<p>hi</p>', null, '[]', jsonb_build_array(jsonb_build_object('name', 'kind', 'value', case when n % 3 = 0 then 'receipt' else 'invoice' end)),
           '<' || n || '@example.com>', 'queued',
           (array['delivered', 'delivered', 'delivered', 'delivered', 'delivered', 'delivered', 'opened', 'clicked', 'bounced', 'delivery_delayed'])[1 + n % 10],
           to_timestamp(${ms} / 1000.0), case when n % 100 = 0 then $5::uuid end, ($6::uuid[])[1 + n % 2]
         from generate_series($2::int, $3::int) as n
         returning id, to_addresses)
       insert into sender.recipients (email_id, position, team_id, address, domain, status, attempts)
       select e.id, 0, $1::uuid, e.to_addresses[1], 'example.org', 'delivered', 1 from e`,
      [teamId, from, to, domains, broadcast, keys],
    );
  }
  return { name, rows, teamId, apiKey: String(team.api_key), keys, domains, broadcast };
}

/** The counters the outbox's trigger keeps, as they would be for the team's emails. */
async function seedCounts(team: Team): Promise<void> {
  await client.query(
    `insert into sender.email_metrics (team_id, hour, domain_id, broadcast_id, provider, metric, n)
     select e.team_id, date_trunc('hour', e.created_at), e.domain_id, coalesce(e.broadcast_id, $2::uuid), m.provider, m.metric, count(*)
     from sender.emails e
     cross join lateral (values
       ('', 'sent'),
       ((array['gmail', 'microsoft', 'yahoo', 'apple', 'other'])[1 + abs(hashtext(e.id::text)) % 5],
         case e.last_event when 'bounced' then 'bounced_permanent' when 'delivery_delayed' then 'delivery_delayed' else 'delivered' end),
       ('', case e.last_event when 'opened' then 'opened_by_people' when 'clicked' then 'clicked_by_people' else null end)
     ) as m (provider, metric)
     where e.team_id = $1 and m.metric is not null
     group by 1, 2, 3, 4, 5, 6`,
    [team.teamId, NIL],
  );
}

try {
  const started = performance.now();
  const small = await seedTeam('Ten thousand', SMALL, 1);
  const large = await seedTeam('A million', LARGE, args['same-matches'] ? Math.round(LARGE / SMALL) : 1);
  await seedCounts(large);
  await client.query('analyze sender.emails, sender.recipients, sender.email_metrics');
  log(`${SMALL} + ${LARGE} emails and their counters in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const answer = async (team: Team, path: string): Promise<number> => {
    const start = performance.now();
    const r = await fetch(`${system.apiUrl}${path}`, { headers: { authorization: `Bearer ${team.apiKey}` } });
    const body = await r.text();
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${body}`);
    return performance.now() - start;
  };
  const filters = (team: Team): Record<string, string> => ({
    none: '',
    last_event: 'last_event=bounced',
    from: 'from=s3@example.com',
    to: `to=reader${42 % ADDRESSES}@example.org`,
    subject: `subject=Invoice%20${String(421 % SUBJECTS).padStart(7, '0')}`,
    tag: 'tag=kind%3Dreceipt',
    domain_id: `domain_id=${team.domains[1]}`,
    api_key_id: `api_key_id=${team.keys[0]}`,
    broadcast_id: `broadcast_id=${team.broadcast}`,
    created: `created_after=${new Date(Date.now() - 10 * DAY_MS).toISOString()}&created_before=${new Date(Date.now() - 9 * DAY_MS).toISOString()}`,
  });
  const day = (offset: number) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);
  const metricQueries: Record<string, string> = {
    'by day': `start_date=${day(-29)}&end_date=${day(0)}&dimensions=period`,
    'by domain': `start_date=${day(-29)}&end_date=${day(0)}&dimensions=domain`,
    'by provider': `start_date=${day(-29)}&end_date=${day(0)}&dimensions=provider`,
  };

  // Warm-up: the services' JIT and Postgres's caches, for both teams.
  for (let i = 0; i < 3; i++)
    for (const team of [small, large])
      for (const query of Object.values(filters(team))) await answer(team, `/emails?limit=100&${query}`);

  const times: Record<string, Record<string, number[]>> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const team of round % 2 === 0 ? [small, large] : [large, small]) {
      for (const [name, query] of Object.entries(filters(team))) {
        ((times[`GET /emails ${name}`] ??= {})[team.name] ??= []).push(
          await answer(team, `/emails?limit=100&${query}`),
        );
      }
    }
    for (const [name, query] of Object.entries(metricQueries)) {
      ((times[`GET /emails/metrics 30 days ${name}`] ??= {})[large.name] ??= []).push(
        await answer(large, `/emails/metrics?${query}`),
      );
    }
  }
  const p50 = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  for (const [name, byTeam] of Object.entries(times)) {
    const l = p50(byTeam[large.name]!);
    const s = byTeam[small.name] ? p50(byTeam[small.name]!) : undefined;
    log(
      s === undefined
        ? `${name}: p50 ${l.toFixed(1)} ms at ${LARGE} emails`
        : `${name}: p50 ${l.toFixed(1)} ms at ${LARGE}, ${s.toFixed(1)} ms at ${SMALL}: ${(l / s).toFixed(2)}×`,
    );
  }
} finally {
  await client.end();
  await system.stop();
}
