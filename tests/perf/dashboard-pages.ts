// Benchmark (run by hand, not a jest test): how long the dashboard takes to show a page of 100 rows for a
// team with a million emails and a million API request logs, in Chromium, through the real gateway.
//
//   node tests/perf/dashboard-pages.ts [--rows 1000000] [--rounds 20]
//
// One team gets `--rows` emails (sender.emails) and `--rows` request logs (gateway.request_logs), written
// straight into the tables as the services would leave them. Then a person signs in and, `--rounds` times
// each, opens the Logs page with 100 rows (`/dashboard/logs?limit=100`), the same page filtered (`status=4xx`),
// and a page further in (`after` a log taken at random). Each figure is the time from the navigation to the
// 100th row on screen (the page's scripts cached, as a person's second visit; the data never cached); beside
// it, the API's answer alone (the same GET /logs from the page). Target: under 1 s.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startSystem } from '@postline/testing';
import { launchBrowser } from '@postline/testing/browser';
import { localInfra, log, percentile } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '20' },
  },
});
const ROWS = Number(args.rows);
const ROUNDS = Number(args.rounds);
const BATCH = 100_000;

// UUIDv7-shaped ids in creation order, as the services make them.
const ID = `(lpad(to_hex(1700000000000 + n), 12, '0') || '7' || substr(md5(n::text), 1, 3) || '8' || substr(md5(n::text), 4, 15))::uuid`;

const system = await startSystem({ RATE_LIMIT_PER_SECOND: '100000' });
const client = new pg.Client({ connectionString: system.env.DATABASE_URL });
await client.connect();
const browser = await launchBrowser();
try {
  const { team_id: teamId } = await system.admin('team', 'create', '--name', 'Bench');
  const person = await system.admin(
    'user',
    'create',
    '--team',
    String(teamId),
    '--email',
    'bench@example.com',
    '--name',
    'Bench',
  );
  const { rows: keys } = await client.query<{ id: string }>('select id from gateway.api_keys where team_id = $1', [
    teamId,
  ]);
  const keyId = keys[0]!.id;

  const started = performance.now();
  for (let from = 1; from <= ROWS; from += BATCH) {
    const to = Math.min(ROWS, from + BATCH - 1);
    await client.query(
      `insert into sender.emails (id, team_id, domain_id, from_header, from_address, from_domain, to_addresses,
         cc_addresses, bcc_addresses, reply_to, subject, html, text, headers, tags, message_id, status, last_event)
       select ${ID}, $1::uuid, gen_random_uuid(), 'Acme <hello@example.com>', 'hello@example.com', 'example.com',
         array['reader' || n || '@example.org'], '{}', '{}', '{}', 'Order ' || n, '<p>hi</p>', null, '[]', '[]',
         '<' || n || '@example.com>', 'queued', 'delivered'
       from generate_series($2::int, $3::int) as n`,
      [teamId, from, to],
    );
    await client.query(
      `insert into gateway.request_logs (id, team_id, api_key_id, user_id, endpoint, method, response_status,
         user_agent, request_body, response_body, created_at)
       select ${ID}, $1::uuid, $2::uuid, null,
         (array['/emails', '/domains', '/emails/batch', '/contacts'])[1 + n % 4],
         (array['POST', 'GET', 'POST', 'PATCH'])[1 + n % 4],
         (array[200, 200, 200, 422, 404, 429, 200, 500])[1 + n % 8],
         'resend-node:6.22.0', jsonb_build_object('to', 'reader' || n || '@example.org', 'subject', 'Order ' || n),
         jsonb_build_object('id', gen_random_uuid()), now() - make_interval(secs => $4::int - n)
       from generate_series($3::int, $4::int) as n`,
      [teamId, keyId, from, to],
    );
  }
  await client.query('analyze sender.emails, gateway.request_logs');
  log(`${ROWS} emails and ${ROWS} request logs in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const { rows: cursors } = await client.query<{ id: string }>(
    'select id from gateway.request_logs where team_id = $1 order by random() limit $2',
    [teamId, ROUNDS],
  );

  const origin = new URL(system.apiUrl).origin;
  const context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('Email').fill('bench@example.com');
  await page.getByLabel('Password').fill(String(person.password));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();

  const timeToRows = async (path: string): Promise<number> => {
    const start = performance.now();
    await page.goto(path);
    // Checked on every animation frame: a locator's wait polls at growing intervals (up to 1 s), which would
    // measure its own back-off rather than the page.
    await page.waitForFunction("document.querySelectorAll('main table tbody tr').length >= 100", null, {
      polling: 'raf',
      timeout: 30_000,
    });
    return performance.now() - start;
  };
  // Warm-up: the page's chunks in the browser's cache, the services' JIT, Postgres's caches.
  for (let i = 0; i < 3; i++) await timeToRows('/dashboard/logs?limit=100');

  // The API's share: the same request the page makes, from the page, its answer read whole.
  const timeToAnswer = (query: string): Promise<number> =>
    page.evaluate(async (q) => {
      const start = performance.now();
      const r = await fetch(`/logs?${q}`);
      await r.json();
      return performance.now() - start;
    }, query);

  const figures: Record<string, { page: number[]; api: number[] }> = {};
  const queries = (round: number) => ({
    first: 'limit=100',
    filtered: 'limit=100&status=4xx',
    further: `limit=100&after=${cursors[round % cursors.length]!.id}`,
  });
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, query] of Object.entries(queries(round))) {
      const f = (figures[name] ??= { page: [], api: [] });
      f.page.push(await timeToRows(`/dashboard/logs?${query}`));
      f.api.push(await timeToAnswer(query));
    }
  }
  const summary = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `p50 ${percentile(sorted, 50).toFixed(0)} ms, p95 ${percentile(sorted, 95).toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`;
  };
  for (const [name, f] of Object.entries(figures)) {
    log(`Logs page, 100 rows, ${name}: ${summary(f.page)} (the API's answer alone: ${summary(f.api)})`);
  }
  await context.close();
} finally {
  await browser.close();
  await client.end();
  await system.stop();
}
