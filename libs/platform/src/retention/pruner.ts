import { sql, type Kysely, type RawBuilder } from 'kysely';
import { DEFAULT_RETENTION_DAYS } from '@postline/contracts';
import { createIntervalJob, type IntervalJob } from '../lifecycle/interval-job.ts';
import type { Logger } from '../logger/logger.ts';
import { Counter, Gauge, type Metrics } from '../http/metrics.ts';

/**
 * A table whose rows age out: a row goes once its `time` is older than its team's retention (or `minDays`). The table
 * needs an index on (`team_id`, `time`): the pruner finds the teams with rows by skipping through it, and
 * each team's old rows through it.
 */
export type RetainedTable = {
  table: string;
  /** The row's age: a `timestamptz` column; a row whose value is null is kept (not finished yet). */
  time: string;
  /**
   * The column that names a row (default `id`), which the children refer to. A table without a one-column key
   * may name its rows by `ctid`: a row's place, which holds within the one statement that finds and deletes it.
   */
  key?: string;
  /**
   * The fewest days a row is kept, whatever its team's retention (a shorter retention is lengthened to this):
   * for rows whose worth is a trend over a fixed span that the API and dashboard show.
   */
  minDays?: number;
  /**
   * Rows per statement (default 500, or the job's `batch` when smaller): fewer for a table whose rows each
   * carry many children, so that one statement still deletes a bounded number of rows.
   */
  batch?: number;
  /** A further condition a row must meet to go, given the cutoff (a scheduled email goes once sent). */
  where?: (cutoff: Date) => RawBuilder<unknown>;
  /**
   * Rows deleted in the same statement as their parent (`column` = the parent's key), listed even when a
   * foreign key would cascade them, so that they are counted; children of children are cascaded.
   */
  children?: readonly { table: string; column: string }[];
  /**
   * Rows the deleted ones referred to that nothing refers to once they are gone (a raw message shared by the
   * emails received from one SMTP transaction), deleted after them in the same transaction: `table`'s
   * `key` is the deleted rows' `column`.
   */
  orphans?: { table: string; key: string; column: string };
  /**
   * Runs before a team's rows are deleted, with the cutoff: keeps what is counted from them (a broadcast's
   * results) where it outlives them. Idempotent: it runs again on every run that finds the team.
   */
  prepare?: (teamId: string, cutoff: Date) => Promise<unknown>;
};

export type RetentionPruner = IntervalJob & {
  /** One full pass now (what each tick runs): rows pruned per table. */
  runOnce: () => Promise<Record<string, number>>;
};

/** Rows per statement: small enough that a batch holds its locks for milliseconds. */
const BATCH = 500;
/** Batches per team and table in one run, so that one team's backlog does not hold up the others. */
const MAX_BATCHES = 200;

/**
 * The retention job of one service: every `everyMs`, for each table in order, each team's rows older than
 * its retention (`retentionOf`, else DEFAULT_RETENTION_DAYS) are deleted with their children, BATCH rows per
 * statement, each statement its own transaction. A run costs one statement per table while nothing is old. Rows a request holds are skipped (SKIP LOCKED) and taken on the next run, so the job
 * never makes a request wait; a restart mid-way loses nothing, the next run goes on from the rows left.
 *
 * Metrics on the service's registry: `retention_rows_pruned_total{table}` (children included) and
 * `retention_oldest_row_age_seconds{table}`, the age of the oldest row kept after the last run (0 when the
 * table has none), which stays under the longest retention when the job keeps up.
 *
 * @example
 * createRetentionPruner({ db, logger, registry, everyMs: 600_000, retentionOf: () => readTeamRetention(db),
 *   tables: [{ table: 'request_logs', time: 'created_at' }] });
 */
export function createRetentionPruner<DB>(deps: {
  db: Kysely<DB>;
  logger: Logger;
  registry: Metrics['registry'];
  everyMs: number;
  tables: readonly RetainedTable[];
  /** Teams with a retention of their own, in days. */
  retentionOf: () => Promise<ReadonlyMap<string, number>>;
  now?: () => Date;
  /** Rows per statement (tests and benchmarks shrink it to see several batches). */
  batch?: number;
}): RetentionPruner {
  const registers = [deps.registry];
  const pruned = new Counter({
    name: 'retention_rows_pruned_total',
    help: 'Rows deleted because they outlived their team’s retention, by table',
    labelNames: ['table'] as const,
    registers,
  });
  const oldest = new Gauge({
    name: 'retention_oldest_row_age_seconds',
    help: 'Age of the oldest row kept in each table subject to retention, after the last pruning run',
    labelNames: ['table'] as const,
    registers,
  });
  const now = deps.now ?? (() => new Date());
  const batch = deps.batch ?? BATCH;
  for (const rule of deps.tables) {
    for (const name of [
      rule.table,
      ...(rule.children ?? []).map((c) => c.table),
      ...(rule.orphans ? [rule.orphans.table] : []),
    ]) {
      pruned.inc({ table: name }, 0);
    }
    oldest.set({ table: rule.table }, 0);
  }

  const runOnce = async (): Promise<Record<string, number>> => {
    const retention = await deps.retentionOf();
    const counts: Record<string, number> = {};
    for (const rule of deps.tables) {
      let oldestKept: Date | undefined;
      for (const [teamId, oldest] of await oldestPerTeam(deps.db, rule)) {
        const days = Math.max(retention.get(teamId) ?? DEFAULT_RETENTION_DAYS, rule.minDays ?? 0);
        const cutoff = new Date(now().getTime() - days * 86_400_000);
        let first: Date | undefined = oldest;
        if (oldest < cutoff) {
          const size = Math.min(rule.batch ?? batch, batch);
          await rule.prepare?.(teamId, cutoff);
          for (let i = 0; i < MAX_BATCHES; i++) {
            const deleted = await deleteBatch(deps.db, rule, teamId, cutoff, size);
            for (const [table, n] of Object.entries(deleted)) {
              counts[table] = (counts[table] ?? 0) + n;
              if (n > 0) pruned.inc({ table }, n);
            }
            if ((deleted[rule.table] ?? 0) < size) break;
          }
          first = await oldestOf(deps.db, rule, teamId);
        }
        if (first && (!oldestKept || first < oldestKept)) oldestKept = first;
      }
      oldest.set({ table: rule.table }, oldestKept ? Math.max(0, (now().getTime() - oldestKept.getTime()) / 1000) : 0);
    }
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    if (total > 0) deps.logger.info({ pruned: counts }, 'retention: rows past their team’s retention deleted');
    return counts;
  };

  const job = createIntervalJob({ name: 'retention-prune', everyMs: deps.everyMs, run: runOnce, logger: deps.logger });
  return { ...job, runOnce };
}

/**
 * Each team with rows in the table, and its oldest row's time, in one statement: one index probe per team
 * (a loose index scan of the (team_id, time) index), not a scan of the rows. A run touches only the teams
 * whose oldest row is past their cutoff.
 */
async function oldestPerTeam<DB>(db: Kysely<DB>, rule: RetainedTable): Promise<Map<string, Date>> {
  const t = sql.table(rule.table);
  const time = sql.ref(rule.time);
  const { rows } = await sql<{ team_id: string; oldest: Date }>`with recursive teams as (
      (select team_id, ${time} as oldest from ${t} where ${time} is not null order by team_id, ${time} limit 1)
      union all
      select next.team_id, next.oldest from teams, lateral (
        select team_id, ${time} as oldest from ${t}
        where ${time} is not null and team_id > teams.team_id
        order by team_id, ${time} limit 1
      ) next
    )
    select team_id, oldest from teams`.execute(db);
  return new Map(rows.map((row) => [row.team_id, row.oldest]));
}

async function oldestOf<DB>(db: Kysely<DB>, rule: RetainedTable, teamId: string): Promise<Date | undefined> {
  const time = sql.ref(rule.time);
  const { rows } = await sql<{ at: Date }>`select ${time} as at from ${sql.table(rule.table)}
    where team_id = ${teamId}::uuid and ${time} is not null order by ${time} limit 1`.execute(db);
  return rows[0]?.at;
}

/**
 * One statement: up to `limit` of the team's rows older than `cutoff` (those not locked by a request), their
 * children, then the rows; and in the same transaction the orphans they leave. Rows deleted per table.
 */
async function deleteBatch<DB>(
  db: Kysely<DB>,
  rule: RetainedTable,
  teamId: string,
  cutoff: Date,
  limit: number,
): Promise<Record<string, number>> {
  const t = sql.table(rule.table);
  const time = sql.ref(rule.time);
  const key = sql.ref(rule.key ?? 'id');
  const children = rule.children ?? [];
  const extra = rule.where ? sql`and (${rule.where(cutoff)})` : sql``;
  const childCtes = children.map(
    (child, i) =>
      sql`, ${sql.ref(`c${i}`)} as (delete from ${sql.table(child.table)}
        where ${sql.ref(child.column)} in (select k from doomed) returning 1)`,
  );
  const childCounts = children.map((_, i) => sql`, (select count(*) from ${sql.ref(`c${i}`)}) as ${sql.ref(`c${i}`)}`);
  const orphanColumn = rule.orphans ? sql`, ${sql.ref(rule.orphans.column)} as orphan` : sql``;
  const statement = sql<Record<string, string | string[]>>`with doomed as (
      select ${key} as k from ${t}
      where team_id = ${teamId}::uuid and ${time} < ${cutoff} ${extra}
      order by ${time} limit ${limit} for update skip locked
    )${sql.join(childCtes, sql``)},
    gone as (delete from ${t} where ${key} in (select k from doomed) returning 1 ${orphanColumn})
    select (select count(*) from gone) as parent ${sql.join(childCounts, sql``)}
      ${rule.orphans ? sql`, array(select distinct orphan from gone where orphan is not null) as orphans` : sql``}`;

  const run = async (trx: Kysely<DB>) => {
    const row = (await statement.execute(trx)).rows[0] ?? {};
    const counts: Record<string, number> = { [rule.table]: Number(row.parent ?? 0) };
    children.forEach((child, i) => {
      counts[child.table] = (counts[child.table] ?? 0) + Number(row[`c${i}`] ?? 0);
    });
    const orphans = rule.orphans;
    const ids = row.orphans;
    if (orphans && Array.isArray(ids) && ids.length > 0) {
      const { numAffectedRows } = await sql`delete from ${sql.table(orphans.table)} o
        where o.${sql.ref(orphans.key)} = any(${ids}::uuid[])
          and not exists (select 1 from ${t} p where p.${sql.ref(orphans.column)} = o.${sql.ref(orphans.key)})`.execute(
        trx,
      );
      counts[orphans.table] = Number(numAffectedRows ?? 0n);
    }
    return counts;
  };
  return rule.orphans ? db.transaction().execute((trx) => run(trx)) : run(db);
}

/** How often the retention job runs: every 10 minutes, times POSTLINE_DELAY_SCALE, but at most once a second. */
export function retentionPruneEveryMs(delayScale: number): number {
  return Math.max(1000, 600_000 * delayScale);
}
