// Benchmark (run by hand, not a jest test): the latency of listing contacts as a team grows, through the
// real gateway and sender.
//
//   node tests/perf/contact-lists.ts [--small 10000] [--large 1000000] [--requests 300]
//
// One team gets `--small` contacts, all members of one segment, written straight into the sender's tables
// (as an import would leave them). Then `--requests` sequential calls each of `GET /contacts?limit=100` and
// `GET /segments/{id}/contacts?limit=100`: half the first page, half a page further in (`after` a contact
// taken at random), so that a query that scans up to its cursor shows. The team then grows to `--large`
// contacts and the same calls are made again. The figure is each list's p50 at the large size against the
// small one (target: within 1.5×). By default the tables are never analyzed (this machine's Postgres runs
// without autovacuum), so the plans must do without statistics; `--analyze` analyzes them after each
// growth, as autovacuum (or an import's own ANALYZE) would. Also the search (`q`) at each size: a part of
// one contact's email (one match), a name part every contact has (every contact matches: the newest page),
// and in the segment; the target there is a page in under 1 s at the large size. And by a topic: one whose
// default is opt-in, left by 1% of the contacts (the subscribed, and the few who left), and one whose default
// is opt-out, chosen by 1% (those few); and the segment, topic and property lists with `counts=true` (every
// contact in the segment, a tenth with a value for the property), `--count-requests` calls each.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Pool } from 'undici';
import { Resend } from 'resend';
import { startSystem } from '@postline/testing';
import { localInfra, log, percentile } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    small: { type: 'string', default: '10000' },
    large: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '300' },
    'count-requests': { type: 'string', default: '20' },
    analyze: { type: 'boolean', default: false },
  },
});
const SMALL = Number(args.small);
const LARGE = Number(args.large);
const REQUESTS = Number(args.requests);
const COUNT_REQUESTS = Number(args['count-requests']);

/** The team's records every contact is made against: its segment, two topics and a property. */
type Audience = { teamId: string; segmentId: string; newsId: string; offersId: string; planId: string };

/**
 * Adds contacts `from`..`to` - 1 to the team and to the segment, in one statement per 100,000: every
 * hundredth opted out of News and into Offers, every tenth with a plan.
 */
async function grow(client: pg.Client, audience: Audience, from: number, to: number): Promise<void> {
  const { teamId, segmentId, newsId, offersId, planId } = audience;
  for (let start = from; start < to; start += 100_000) {
    const end = Math.min(to, start + 100_000);
    // UUIDv7-shaped ids in creation order, as the sender makes them.
    await client.query(
      `with made as (
         insert into sender.contacts (id, team_id, email, first_name, properties, created_at, updated_at)
         select (lpad(to_hex(1700000000000 + n), 12, '0') || '7' || substr(md5(n::text), 1, 3) || '8' || substr(md5(n::text), 4, 15))::uuid,
                $1::uuid, 'contact' || n || '@example.com', 'Contact ' || n,
                case when n % 10 = 0 then jsonb_build_object($7::text, 'pro') else '{}' end, now(), now()
         from generate_series($3::int, $4::int - 1) as n
         returning id, email),
       segmented as (
         insert into sender.contact_segments (segment_id, contact_id, team_id) select $2::uuid, id, $1::uuid from made)
       insert into sender.contact_topics (contact_id, topic_id, team_id, subscription)
       select id, topic, $1::uuid, subscription from made
       cross join (values ($5::uuid, 'opt_out'), ($6::uuid, 'opt_in')) as t(topic, subscription)
       where substring(email from 'contact([0-9]+)@')::int % 100 = 0`,
      [teamId, segmentId, start, end, newsId, offersId, planId],
    );
  }
  if (args.analyze) await client.query('analyze sender.contacts, sender.contact_segments, sender.contact_topics');
}

type Lists = Record<
  | 'contacts'
  | 'segment'
  | 'rare'
  | 'common'
  | 'segmentSearch'
  | 'newsIn'
  | 'newsOut'
  | 'offersIn'
  | 'segmentCounts'
  | 'topicCounts'
  | 'propertyCounts',
  number[]
>;

async function measure(apiUrl: string, apiKey: string, audience: Audience, client: pg.Client): Promise<Lists> {
  const { teamId, segmentId, newsId, offersId } = audience;
  const origin = new URL(apiUrl).origin;
  const http = new Pool(origin, { connections: 1 });
  const headers = { authorization: `Bearer ${apiKey}`, 'user-agent': 'contact-lists-benchmark' };
  const { rows } = await client.query<{ id: string }>(
    'select id from sender.contacts where team_id = $1 order by random() limit $2',
    [teamId, REQUESTS],
  );
  const cursors = rows.map((row) => row.id);
  const timed = async (path: string): Promise<number> => {
    const started = performance.now();
    const res = await http.request({ method: 'GET', path, headers });
    const body = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${body.slice(0, 200)}`);
    return performance.now() - started;
  };
  const lists: Lists = {
    contacts: [],
    segment: [],
    rare: [],
    common: [],
    segmentSearch: [],
    newsIn: [],
    newsOut: [],
    offersIn: [],
    segmentCounts: [],
    topicCounts: [],
    propertyCounts: [],
  };
  // Warm-up: connections, the services' JIT, Postgres's caches.
  for (let i = 0; i < 100; i++) {
    await timed('/contacts?limit=100');
    await timed(`/segments/${segmentId}/contacts?limit=100`);
  }
  for (let i = 0; i < REQUESTS; i++) {
    const after = i % 2 === 1 ? `&after=${cursors[i % cursors.length]}` : '';
    lists.contacts.push(await timed(`/contacts?limit=100${after}`));
    lists.segment.push(await timed(`/segments/${segmentId}/contacts?limit=100${after}`));
    // A contact of the team's first 10,000, by a part of its address (one match).
    lists.rare.push(await timed(`/contacts?limit=100&q=contact${(i * 7919) % 10_000}%40example`));
    lists.common.push(await timed(`/contacts?limit=100&q=contact%20`));
    lists.segmentSearch.push(
      await timed(`/contacts?limit=100&segment_id=${segmentId}&q=contact${(i * 7919) % 10_000}%40`),
    );
    lists.newsIn.push(await timed(`/contacts?limit=100&topic_id=${newsId}${after}`));
    lists.newsOut.push(await timed(`/contacts?limit=100&topic_id=${newsId}&topic_subscription=opt_out${after}`));
    lists.offersIn.push(await timed(`/contacts?limit=100&topic_id=${offersId}&topic_subscription=opt_in${after}`));
  }
  for (let i = 0; i < COUNT_REQUESTS; i++) {
    lists.segmentCounts.push(await timed('/segments?counts=true'));
    lists.topicCounts.push(await timed('/topics?counts=true'));
    lists.propertyCounts.push(await timed('/contact-properties?counts=true'));
  }
  await http.close();
  for (const values of Object.values(lists)) values.sort((a, b) => a - b);
  return lists;
}

const system = await startSystem({ RATE_LIMIT_PER_SECOND: '100000' });
const client = new pg.Client({ connectionString: system.env.DATABASE_URL });
await client.connect();
try {
  const { api_key: apiKey, team_id: teamId } = await system.admin('team', 'create', '--name', 'Bench');
  const resend = new Resend(String(apiKey), { baseUrl: system.apiUrl });
  const segment = await resend.segments.create({ name: 'Everyone' });
  if (!segment.data) throw new Error(`segment: ${JSON.stringify(segment.error)}`);
  const news = await resend.topics.create({ name: 'News', defaultSubscription: 'opt_in' });
  const offers = await resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' });
  const plan = await resend.contactProperties.create({ key: 'plan', type: 'string' });
  if (!news.data || !offers.data || !plan.data) throw new Error('topics or the property were refused');
  const audience: Audience = {
    teamId: String(teamId),
    segmentId: segment.data.id,
    newsId: news.data.id,
    offersId: offers.data.id,
    planId: plan.data.id,
  };

  await grow(client, audience, 0, SMALL);
  log(`${SMALL} contacts`);
  const small = await measure(system.apiUrl, String(apiKey), audience, client);
  const started = performance.now();
  await grow(client, audience, SMALL, LARGE);
  log(`${LARGE} contacts (grown in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
  const large = await measure(system.apiUrl, String(apiKey), audience, client);

  const row = (name: string, a: number[], b: number[], target = 'target ≤ 1.5×') =>
    `${name}: p50 ${percentile(a, 50).toFixed(2)} ms at ${SMALL}, ${percentile(b, 50).toFixed(2)} ms at ${LARGE} → ${(percentile(b, 50) / percentile(a, 50)).toFixed(2)}× (${target}); p99 ${percentile(a, 99).toFixed(2)} → ${percentile(b, 99).toFixed(2)} ms`;
  const search = 'target: a page in under 1 s';
  console.log(`\n== contact-lists benchmark (${args.analyze ? 'tables analyzed' : 'no statistics'}) ==`);
  console.log(row('GET /contacts?limit=100', small.contacts, large.contacts));
  console.log(row('GET /segments/{id}/contacts?limit=100', small.segment, large.segment));
  console.log(row('GET /contacts?q= (one match)', small.rare, large.rare, search));
  console.log(row('GET /contacts?q= (every contact matches)', small.common, large.common, search));
  console.log(row('GET /contacts?segment_id=&q= (one match)', small.segmentSearch, large.segmentSearch, search));
  console.log(row('GET /contacts?topic_id= (opt-in default, 99% subscribed)', small.newsIn, large.newsIn, search));
  console.log(
    row('GET /contacts?topic_id=&topic_subscription=opt_out (1% left)', small.newsOut, large.newsOut, search),
  );
  console.log(
    row(
      'GET /contacts?topic_id=&topic_subscription=opt_in (opt-out default, 1% chose)',
      small.offersIn,
      large.offersIn,
      search,
    ),
  );
  console.log(row('GET /segments?counts=true', small.segmentCounts, large.segmentCounts, 'no target'));
  console.log(row('GET /topics?counts=true', small.topicCounts, large.topicCounts, 'no target'));
  console.log(row('GET /contact-properties?counts=true', small.propertyCounts, large.propertyCounts, 'no target'));
} finally {
  await client.end();
  await system.stop();
}
