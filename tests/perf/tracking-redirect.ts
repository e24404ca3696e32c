// Benchmark (run by hand, not a jest test): the latency of a click-tracking redirect through the real
// gateway and sender, as a mail client's click meets it.
//
//   node tests/perf/tracking-redirect.ts [--emails 1000] [--seconds 10] [--concurrency 4]
//
// `--emails` sent emails are written straight into the sender's table (the redirect reads only the email's
// team), each with one click token sealed as the composer seals them (the system's POSTLINE_SECRET_KEY).
// Then a closed loop: `--concurrency` clients, each with one kept-alive connection, each sending
// `GET /c/{token}` (tokens taken in turn, so most requests are of another email than the last) and the next
// as soon as the 302 is in, for `--seconds`. Every redirect also hands its click to the recorder, so the
// batched writes (engagement rows, email.clicked events, last_event) run alongside, as they would. The
// figure is the p99 of the redirect at the client (target ≤ 10 ms on the 2-core machine); p50 and the rate
// are given with it. The per-link rate limit is raised out of the way (each link takes a few requests a
// second here; it is not what is measured). A warm-up round (every token once) goes first.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Pool } from 'undici';
import { startSystem } from '@postline/testing';
import { createTrackingCipher } from '../../services/sender/src/engagement/domain/tracking-links.ts';

import { closedLoop, localInfra, log } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    emails: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '4' },
  },
});
const EMAILS = Number(args.emails);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);

const system = await startSystem({ PUBLIC_LINK_RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_SECOND: '100000' });
const client = new pg.Client({ connectionString: system.env.DATABASE_URL });
await client.connect();
try {
  const { team_id: teamId } = await system.admin('team', 'create', '--name', 'Bench');
  const { rows } = await client.query<{ id: string }>(
    `insert into sender.emails (id, team_id, domain_id, from_header, from_address, from_domain, to_addresses, cc_addresses,
       bcc_addresses, reply_to, subject, html, text, headers, tags, message_id, status, last_event)
     select (lpad(to_hex(1700000000000 + n), 12, '0') || '7' || substr(md5(n::text), 1, 3) || '8' || substr(md5(n::text), 4, 15))::uuid,
       $1::uuid, gen_random_uuid(), 'Acme <hello@example.com>', 'hello@example.com', 'example.com', '{reader@example.org}', '{}',
       '{}', '{}', 'Tracked', '<p>hi</p>', null, '[]', '[]', '<' || n || '@example.com>', 'queued', 'delivered'
     from generate_series(1, $2::int) as n
     returning id`,
    [String(teamId), EMAILS],
  );
  const cipher = createTrackingCipher(String(system.env.POSTLINE_SECRET_KEY));
  const paths = rows.map(
    (row, n) =>
      `/c/${cipher.seal({ kind: 'click', emailId: row.id, url: `https://example.org/article/${n}?utm_source=news` }, 'links.example.com')}`,
  );
  log(`${paths.length} emails, one link each`);

  const origin = new URL(system.apiUrl).origin;
  const http = new Pool(origin, { connections: CONCURRENCY, pipelining: 1 });
  const headers = {
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36',
    host: 'links.example.com',
  };
  let next = 0;
  const once = async (): Promise<{ ok: true }> => {
    const path = paths[next++ % paths.length]!;
    const res = await http.request({ method: 'GET', path, headers });
    await res.body.dump();
    if (res.statusCode !== 302) throw new Error(`${path}: ${res.statusCode}`);
    return { ok: true };
  };

  const result = await closedLoop({
    concurrency: CONCURRENCY,
    turn: once,
    // Every token once, one at a time: JIT, connections, the email-team cache.
    warmUp: async () => {
      for (let i = 0; i < paths.length; i++) await once();
    },
    window: { seconds: SECONDS },
  });
  await http.close();
  console.log(`\n== tracking-redirect benchmark (${CONCURRENCY} clients, closed loop, ${SECONDS} s) ==`);
  console.log(
    `GET /c/{token} → 302: ${result.count} requests, ${result.rate.toFixed(0)}/s; ` +
      `p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms (target p99 ≤ 10 ms), ` +
      `max ${result.max.toFixed(2)} ms`,
  );
  // The clicks recorded meanwhile (the batcher writes them within 50 ms of each).
  const recorded = await client.query<{ n: string }>(
    `select count(*) as n from sender.email_engagements where team_id = $1::uuid`,
    [String(teamId)],
  );
  log(`${recorded.rows[0]?.n} clicks recorded`);
} finally {
  await client.end();
  await system.stop();
}
