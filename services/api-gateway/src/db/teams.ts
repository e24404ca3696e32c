import type { Kysely, Transaction } from 'kysely';
import type { GatewayDb, Team } from './schema.ts';

export async function insertTeam(db: Kysely<GatewayDb>, team: { id: string; name: string }): Promise<Team> {
  return db
    .insertInto('teams')
    .values({ ...team, rate_limit_per_second: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Whether the team's access is enabled; undefined when there is no such team (never cached). */
export async function teamHasAccess(db: Kysely<GatewayDb>, id: string): Promise<boolean | undefined> {
  const team = await db.selectFrom('teams').select('access_enabled').where('id', '=', id).executeTakeFirst();
  return team?.access_enabled;
}

/** Returns false when no team has that id. */
export async function setTeamAccess(db: Kysely<GatewayDb>, id: string, enabled: boolean): Promise<boolean> {
  const result = await db.updateTable('teams').set({ access_enabled: enabled }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function setTeamRateLimit(db: Kysely<GatewayDb>, id: string, perSecond: number | null): Promise<boolean> {
  const result = await db
    .updateTable('teams')
    .set({ rate_limit_per_second: perSecond })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function findTeam(db: Kysely<GatewayDb>, id: string): Promise<Team | undefined> {
  return db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Sets the team's retention and marks it for the owners (the retention-sync job). False when no such team. */
export async function setTeamRetention(db: Kysely<GatewayDb>, id: string, days: number, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('teams')
    .set({ retention_days: days, retention_changed_at: now, retention_unsynced: true })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Each team with a retention of its own, and its days. */
export async function teamRetentionOverrides(db: Kysely<GatewayDb>): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('teams')
    .select(['id', 'retention_days'])
    .where('retention_days', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [row.id, row.retention_days ?? 0]));
}

export type UnsyncedRetention = { id: string; days: number; changedAt: Date };

/** Teams whose last retention change the owners have yet to be told of, a page at a time. */
export async function unsyncedRetention(db: Kysely<GatewayDb>, limit: number): Promise<UnsyncedRetention[]> {
  const rows = await db
    .selectFrom('teams')
    .select(['id', 'retention_days', 'retention_changed_at'])
    .where('retention_unsynced', '=', true)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.flatMap((row) =>
    row.retention_days !== null && row.retention_changed_at
      ? [{ id: row.id, days: row.retention_days, changedAt: row.retention_changed_at }]
      : [],
  );
}

/** Clears the mark unless the operator changed the retention again meanwhile (that change is pushed next). */
export async function markRetentionSynced(db: Kysely<GatewayDb>, id: string, changedAt: Date): Promise<void> {
  await db
    .updateTable('teams')
    .set({ retention_unsynced: false })
    .where('id', '=', id)
    .where('retention_changed_at', '=', changedAt)
    .execute();
}

/** A team's own reputation guard lines; null for each it takes from the install. */
export type TeamReputationLines = {
  bounceRate: number | null;
  complaintRate: number | null;
  window: number | null;
  minSends: number | null;
};

/** The team's own reputation guard lines, locked until the caller's transaction ends; undefined: no such team. */
export async function lockTeamReputation(
  trx: Transaction<GatewayDb>,
  id: string,
): Promise<TeamReputationLines | undefined> {
  const row = await trx
    .selectFrom('teams')
    .select(['reputation_bounce_rate', 'reputation_complaint_rate', 'reputation_window', 'reputation_min_sends'])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return row && reputationLinesOf(row);
}

/** Sets the team's own reputation guard lines and marks them for the sender (the reputation-sync job). */
export async function setTeamReputation(
  db: Kysely<GatewayDb> | Transaction<GatewayDb>,
  id: string,
  lines: TeamReputationLines,
  now: Date,
): Promise<void> {
  await db
    .updateTable('teams')
    .set({
      reputation_bounce_rate: lines.bounceRate,
      reputation_complaint_rate: lines.complaintRate,
      reputation_window: lines.window,
      reputation_min_sends: lines.minSends,
      reputation_changed_at: now,
      reputation_unsynced: true,
    })
    .where('id', '=', id)
    .execute();
}

export type UnsyncedReputation = { id: string; lines: TeamReputationLines; changedAt: Date };

/** Teams whose last change of reputation lines the sender has yet to be told of, a page at a time. */
export async function unsyncedReputation(db: Kysely<GatewayDb>, limit: number): Promise<UnsyncedReputation[]> {
  const rows = await db
    .selectFrom('teams')
    .select([
      'id',
      'reputation_bounce_rate',
      'reputation_complaint_rate',
      'reputation_window',
      'reputation_min_sends',
      'reputation_changed_at',
    ])
    .where('reputation_unsynced', '=', true)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.flatMap((row) =>
    row.reputation_changed_at
      ? [{ id: row.id, lines: reputationLinesOf(row), changedAt: row.reputation_changed_at }]
      : [],
  );
}

/** Clears the mark unless the operator changed the lines again meanwhile (that change is pushed next). */
export async function markReputationSynced(db: Kysely<GatewayDb>, id: string, changedAt: Date): Promise<void> {
  await db
    .updateTable('teams')
    .set({ reputation_unsynced: false })
    .where('id', '=', id)
    .where('reputation_changed_at', '=', changedAt)
    .execute();
}

function reputationLinesOf(row: {
  reputation_bounce_rate: number | null;
  reputation_complaint_rate: number | null;
  reputation_window: number | null;
  reputation_min_sends: number | null;
}): TeamReputationLines {
  return {
    bounceRate: row.reputation_bounce_rate,
    complaintRate: row.reputation_complaint_rate,
    window: row.reputation_window,
    minSends: row.reputation_min_sends,
  };
}
