import type { Kysely } from 'kysely';
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
