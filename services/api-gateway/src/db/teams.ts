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
