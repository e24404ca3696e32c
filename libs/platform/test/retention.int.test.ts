// The retention job on a real Postgres: per-team cutoffs, children and orphans deleted with their rows,
// rows a request holds skipped without waiting, a later run (or a restarted process) going on from what
// is left, and the metrics it reports.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createTestDatabase, type TestDatabase } from '@postline/testing';
import {
  createDb,
  createLogger,
  createMetrics,
  createRetentionPruner,
  createTeamRetentionTable,
  newId,
  readTeamRetention,
  saveTeamRetention,
  type Metrics,
  type RetainedTable,
} from '../src/index.ts';

let database: TestDatabase;
let db: Kysely<unknown>;
const logger = createLogger({ service: 'retention-test', level: 'silent' });
const DAY = 86_400_000;

const TABLES: readonly RetainedTable[] = [
  {
    table: 'letters',
    time: 'created_at',
    where: (cutoff) => sql`sent_at is null or sent_at < ${cutoff}`,
    children: [
      { table: 'stamps', column: 'letter_id' },
      { table: 'marks', column: 'letter_id' },
    ],
    orphans: { table: 'envelopes', key: 'id', column: 'envelope_id' },
  },
];

beforeAll(async () => {
  database = await createTestDatabase('retention');
  db = createDb<unknown>({ url: database.url, schema: 'ret' }).db;
  await sql`create schema ret`.execute(db);
  await createTeamRetentionTable(db);
  await sql`create table envelopes (id uuid primary key)`.execute(db);
  await sql`create table letters (id uuid primary key, team_id uuid not null, created_at timestamptz not null,
    sent_at timestamptz, envelope_id uuid not null references envelopes (id))`.execute(db);
  await sql`create index letters_team_created on letters (team_id, created_at)`.execute(db);
  // One child cascades from its letter, the other has no foreign key: both must go, and be counted.
  await sql`create table stamps (letter_id uuid not null references letters (id) on delete cascade)`.execute(db);
  await sql`create table marks (letter_id uuid not null)`.execute(db);
});

afterAll(async () => {
  await db.destroy();
  await database.drop();
});

/** A letter `ageDays` old with a stamp and a mark, in `envelope` (a new one unless given). */
async function letter(teamId: string, ageDays: number, opts: { envelope?: string; sentInDays?: number } = {}) {
  const id = newId();
  const envelope = opts.envelope ?? newId();
  await sql`insert into envelopes (id) values (${envelope}::uuid) on conflict do nothing`.execute(db);
  const sentAt = opts.sentInDays === undefined ? null : new Date(Date.now() + opts.sentInDays * DAY);
  await sql`insert into letters (id, team_id, created_at, sent_at, envelope_id)
    values (${id}::uuid, ${teamId}::uuid, ${new Date(Date.now() - ageDays * DAY)}, ${sentAt}, ${envelope}::uuid)`.execute(
    db,
  );
  await sql`insert into stamps (letter_id) values (${id}::uuid)`.execute(db);
  await sql`insert into marks (letter_id) values (${id}::uuid)`.execute(db);
  return { id, envelope };
}

async function exists(table: string, column: string, id: string): Promise<boolean> {
  const { rows } = await sql`select 1 from ${sql.table(table)} where ${sql.ref(column)} = ${id}::uuid`.execute(db);
  return rows.length > 0;
}

function pruner(metrics: Metrics, batch = 2) {
  return createRetentionPruner({
    db,
    logger,
    registry: metrics.registry,
    everyMs: 60_000,
    tables: TABLES,
    retentionOf: () => readTeamRetention(db),
    batch,
  });
}

async function metricValue(metrics: Metrics, name: string, table: string): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => v.labels.table === table)?.value ?? Number.NaN;
}

describe('the retention job', () => {
  it("deletes each team's rows past its retention with their children, and keeps their neighbours", async () => {
    const byDefault = newId();
    const longer = newId();
    await saveTeamRetention(db, longer, { days: 90, changedAt: new Date() });
    const old = await Promise.all([1, 2, 3, 4, 5].map(() => letter(byDefault, 31)));
    const recent = await letter(byDefault, 29);
    const keptLonger = await letter(longer, 60);
    const goneLonger = await letter(longer, 91);
    // Scheduled a month from now: kept, whatever its age, until it was sent longer ago than the retention.
    const scheduled = await letter(byDefault, 40, { sentInDays: 30 });
    // One envelope holds an old and a recent letter: it stays while the recent one refers to it.
    const sharedOld = await letter(byDefault, 45);
    const sharedRecent = await letter(byDefault, 1, { envelope: sharedOld.envelope });

    const metrics = createMetrics('retention-test');
    const counts = await pruner(metrics).runOnce();

    for (const gone of [...old, goneLonger, sharedOld]) {
      expect(await exists('letters', 'id', gone.id)).toBe(false);
      expect(await exists('stamps', 'letter_id', gone.id)).toBe(false);
      expect(await exists('marks', 'letter_id', gone.id)).toBe(false);
    }
    for (const gone of [...old, goneLonger]) expect(await exists('envelopes', 'id', gone.envelope)).toBe(false);
    for (const kept of [recent, keptLonger, scheduled, sharedRecent]) {
      expect(await exists('letters', 'id', kept.id)).toBe(true);
      expect(await exists('stamps', 'letter_id', kept.id)).toBe(true);
      expect(await exists('marks', 'letter_id', kept.id)).toBe(true);
    }
    expect(await exists('envelopes', 'id', sharedOld.envelope)).toBe(true);
    // Seven letters in batches of two: several statements, each counted.
    expect(counts).toEqual({ letters: 7, stamps: 7, marks: 7, envelopes: 6 });
    expect(await metricValue(metrics, 'retention_rows_pruned_total', 'letters')).toBe(7);
    expect(await metricValue(metrics, 'retention_rows_pruned_total', 'stamps')).toBe(7);
    expect(await metricValue(metrics, 'retention_rows_pruned_total', 'envelopes')).toBe(6);
    // The oldest letter kept is the longer team's, 60 days old.
    const oldest = await metricValue(metrics, 'retention_oldest_row_age_seconds', 'letters');
    expect(oldest).toBeGreaterThan(59.9 * 86_400);
    expect(oldest).toBeLessThan(60.1 * 86_400);

    // Set shorter, the longer team's letter goes on the next run.
    await saveTeamRetention(db, longer, { days: 30, changedAt: new Date() });
    await pruner(createMetrics('retention-test')).runOnce();
    expect(await exists('letters', 'id', keptLonger.id)).toBe(false);
  });

  it('skips rows a transaction holds without waiting for it, and a later run (a restarted process) takes them', async () => {
    const team = newId();
    const held = await letter(team, 100);
    const free = await letter(team, 100);
    const connection = await db.connection().execute(async (holder) => {
      await sql`begin`.execute(holder);
      await sql`select 1 from letters where id = ${held.id}::uuid for update`.execute(holder);
      try {
        // Would hang here until the transaction ends if the job waited on the lock.
        await pruner(createMetrics('retention-test')).runOnce();
        return { heldThen: await exists('letters', 'id', held.id), freeThen: await exists('letters', 'id', free.id) };
      } finally {
        await sql`commit`.execute(holder);
      }
    });
    expect(connection).toEqual({ heldThen: true, freeThen: false });
    await pruner(createMetrics('retention-test')).runOnce();
    expect(await exists('letters', 'id', held.id)).toBe(false);
  });

  it('keeps rows for a table’s fewest days over a shorter retention, and names rows without a one-column key by their place', async () => {
    // Notes: two columns make a row's key, and a note is kept at least 90 days.
    await sql`create table notes (team_id uuid not null, author uuid not null, written_at timestamptz not null,
      primary key (team_id, author))`.execute(db);
    await sql`create index notes_team_written on notes (team_id, written_at)`.execute(db);
    const byDefault = newId();
    const longer = newId();
    await saveTeamRetention(db, longer, { days: 120, changedAt: new Date() });
    const note = async (teamId: string, ageDays: number) => {
      const author = newId();
      await sql`insert into notes (team_id, author, written_at)
        values (${teamId}::uuid, ${author}::uuid, ${new Date(Date.now() - ageDays * DAY)})`.execute(db);
      return author;
    };
    const notes = {
      // Past the default 30 days but within the 90 kept at least.
      kept: await note(byDefault, 60),
      gone: await note(byDefault, 91),
      alsoGone: await note(byDefault, 95),
      // A team's longer retention still counts.
      keptLonger: await note(longer, 100),
      goneLonger: await note(longer, 121),
    };
    const counts = await createRetentionPruner({
      db,
      logger,
      registry: createMetrics('retention-test').registry,
      everyMs: 60_000,
      tables: [{ table: 'notes', time: 'written_at', key: 'ctid', minDays: 90 }],
      retentionOf: () => readTeamRetention(db),
      batch: 1,
    }).runOnce();
    expect(counts).toEqual({ notes: 3 });
    const { rows } = await sql<{ author: string }>`select author from notes`.execute(db);
    expect(rows.map((r) => r.author).sort()).toEqual([notes.kept, notes.keptLonger].sort());
  });

  it('deletes a table with its own batch size in as many statements as that takes', async () => {
    await sql`create table reports (id uuid primary key, team_id uuid not null, ended_at timestamptz not null)`.execute(
      db,
    );
    await sql`create index reports_team_ended on reports (team_id, ended_at)`.execute(db);
    const team = newId();
    for (let i = 0; i < 5; i++) {
      await sql`insert into reports (id, team_id, ended_at)
        values (${newId()}::uuid, ${team}::uuid, ${new Date(Date.now() - 40 * DAY)})`.execute(db);
    }
    // Counts the statements that delete (each batch is one).
    let deletes = 0;
    const counted = db.withPlugin({
      transformQuery: (args) => {
        if (args.node.kind === 'RawNode' && args.node.sqlFragments.join('').includes('delete from')) deletes++;
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    });
    const counts = await createRetentionPruner({
      db: counted,
      logger,
      registry: createMetrics('retention-test').registry,
      everyMs: 60_000,
      tables: [{ table: 'reports', time: 'ended_at', batch: 2 }],
      retentionOf: () => readTeamRetention(db),
    }).runOnce();
    expect(counts).toEqual({ reports: 5 });
    // 2 + 2 + 1, against one statement at the job's default of 500.
    expect(deletes).toBe(3);
  });

  it('keeps a later retention change when an older push arrives after it', async () => {
    const team = newId();
    await saveTeamRetention(db, team, { days: 7, changedAt: new Date('2026-02-01T00:00:00Z') });
    await saveTeamRetention(db, team, { days: 400, changedAt: new Date('2026-01-01T00:00:00Z') });
    expect((await readTeamRetention(db)).get(team)).toBe(7);
  });
});
