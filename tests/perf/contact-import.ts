// Benchmark (run by hand, not a jest test): a CSV contact import through the real gateway and sender.
//
//   node tests/perf/contact-import.ts [--rows 100000] [--rounds 3]
//
// One team gets three contact properties (two strings, one number) and a segment. Each round uploads a
// CSV of `--rows` new contacts (email, first and last name, the three properties) into the segment with
// the official SDK, and times from the 201 to the import's `completed` (polled every 50 ms), then checks
// the counts and the segment's size. The figure is the median of the rounds (target: 100,000 rows in
// ≤ 30 s on the 2-core machine).
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Resend } from 'resend';
import { dataOf, startSystem } from '@postline/testing';
import { inTurns, localInfra, log, middle } from './harness.ts';

localInfra();

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
  },
});
const ROWS = Number(args.rows);
const ROUNDS = Number(args.rounds);

function csv(round: number): string {
  const lines = ['email,first_name,last_name,plan,company,seats'];
  for (let i = 0; i < ROWS; i++)
    lines.push(
      `user${i}.r${round}@example.com,First${i},Last${i},${i % 3 === 0 ? 'pro' : 'free'},"Company ${i % 997}, Inc.",${i % 50}`,
    );
  return `${lines.join('\n')}\n`;
}

const system = await startSystem({ RATE_LIMIT_PER_SECOND: '1000', LOG_LEVEL: 'warn' });
try {
  const resend = new Resend(String((await system.admin('team', 'create', '--name', 'Import benchmark')).api_key), {
    baseUrl: system.apiUrl,
  });
  dataOf(await resend.contactProperties.create({ key: 'plan', type: 'string' }));
  dataOf(await resend.contactProperties.create({ key: 'company', type: 'string' }));
  dataOf(await resend.contactProperties.create({ key: 'seats', type: 'number' }));
  const client = new pg.Client({ connectionString: String(system.env.DATABASE_URL) });
  await client.connect();
  const seconds = await inTurns(ROUNDS, async (round) => {
    const segment = dataOf(await resend.segments.create({ name: `import ${round}` })).id;
    const file = new Blob([csv(round)], { type: 'text/csv' });
    const uploadStarted = performance.now();
    const { id } = dataOf(await resend.contacts.imports.create({ file, segments: [{ id: segment }] }));
    const accepted = performance.now();
    let status = 'queued';
    let counts = { total: 0, created: 0, updated: 0, skipped: 0, failed: 0 };
    while (status !== 'completed' && status !== 'failed') {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ({ status, counts } = dataOf(await resend.contacts.imports.get(id)));
    }
    const elapsed = (performance.now() - accepted) / 1000;
    const { rows } = await client.query<{ members: string }>(
      'select count(*) as members from sender.contact_segments where segment_id = $1',
      [segment],
    );
    if (status !== 'completed' || counts.created !== ROWS || Number(rows[0]?.members) !== ROWS) {
      throw new Error(`round ${round}: ${status} ${JSON.stringify(counts)}, ${rows[0]?.members} in the segment`);
    }
    log(
      `round ${round}: ${ROWS} rows (${(file.size / 1024 / 1024).toFixed(1)} MB) uploaded in ${((accepted - uploadStarted) / 1000).toFixed(2)} s, ` +
        `201 → completed in ${elapsed.toFixed(2)} s (${Math.round(ROWS / elapsed)} rows/s)`,
    );
    return elapsed;
  });
  await client.end();
  log(`median of ${ROUNDS}: ${middle(seconds).toFixed(2)} s for ${ROWS} rows (target ≤ 30 s for 100,000)`);
} finally {
  await system.stop();
}
