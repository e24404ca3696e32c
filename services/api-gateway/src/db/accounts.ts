import { sql, type Kysely } from 'kysely';
import type { GatewayDb, Role, Session, User } from './schema.ts';

export type Membership = { team_id: string; team_name: string; role: Role; access_enabled: boolean };

export async function insertUser(
  db: Kysely<GatewayDb>,
  user: Pick<User, 'id' | 'email' | 'name' | 'password_hash'>,
): Promise<User> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function findUserByEmail(db: Kysely<GatewayDb>, email: string): Promise<User | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function findUser(db: Kysely<GatewayDb>, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function anyUserExists(db: Kysely<GatewayDb>): Promise<boolean> {
  return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
}

export async function addMember(db: Kysely<GatewayDb>, teamId: string, userId: string, role: Role): Promise<void> {
  await db.insertInto('team_members').values({ team_id: teamId, user_id: userId, role }).execute();
}

/** The user's teams, oldest membership first. */
export async function membershipsOf(db: Kysely<GatewayDb>, userId: string): Promise<Membership[]> {
  return db
    .selectFrom('team_members')
    .innerJoin('teams', 'teams.id', 'team_members.team_id')
    .select(['team_members.team_id', 'teams.name as team_name', 'team_members.role', 'teams.access_enabled'])
    .where('team_members.user_id', '=', userId)
    .orderBy('team_members.created_at')
    .orderBy('team_members.team_id')
    .execute();
}

export async function setPassword(db: Kysely<GatewayDb>, userId: string, passwordHash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
}

export async function insertSession(
  db: Kysely<GatewayDb>,
  session: Pick<
    Session,
    'id' | 'user_id' | 'team_id' | 'token_hash' | 'ip' | 'user_agent' | 'last_seen_at' | 'expires_at'
  >,
): Promise<Session> {
  return db
    .insertInto('sessions')
    .values({ ...session, revoked_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type SessionWithAccess = Session & {
  role: Role | null;
  access_enabled: boolean;
  rate_limit_per_second: number | null;
};

/** The session with that token hash, the user's role in its current team (null if no longer a member) and the team's access. */
export async function findSession(db: Kysely<GatewayDb>, tokenHash: string): Promise<SessionWithAccess | undefined> {
  return db
    .selectFrom('sessions')
    .innerJoin('teams', 'teams.id', 'sessions.team_id')
    .leftJoin('team_members', (join) =>
      join
        .onRef('team_members.team_id', '=', 'sessions.team_id')
        .onRef('team_members.user_id', '=', 'sessions.user_id'),
    )
    .selectAll('sessions')
    .select(['team_members.role', 'teams.access_enabled', 'teams.rate_limit_per_second'])
    .where('sessions.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function touchSession(db: Kysely<GatewayDb>, id: string, at: Date): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_seen_at: at })
    .where('id', '=', id)
    .where('last_seen_at', '<', at)
    .execute();
}

export async function setSessionTeam(db: Kysely<GatewayDb>, id: string, teamId: string): Promise<void> {
  await db.updateTable('sessions').set({ team_id: teamId }).where('id', '=', id).execute();
}

/** The user's sessions still live at `now` (not revoked, not past their absolute expiry), newest first. */
export async function listSessions(db: Kysely<GatewayDb>, userId: string, now: Date): Promise<Session[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .execute();
}

/** Revokes one of the user's sessions; false when the user has no such live session. */
export async function revokeSession(db: Kysely<GatewayDb>, userId: string, id: string): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ revoked_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Revokes every session of the user but `keep` (a password change signs out everywhere else). */
export async function revokeOtherSessions(db: Kysely<GatewayDb>, userId: string, keep: string | null): Promise<void> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (keep) query = query.where('id', '!=', keep);
  await query.execute();
}

export async function insertSetupToken(db: Kysely<GatewayDb>, tokenHash: string, expiresAt: Date): Promise<void> {
  await db.insertInto('setup_tokens').values({ token_hash: tokenHash, expires_at: expiresAt, used_at: null }).execute();
}

/** Uses a setup token once: true only for the first use of an unexpired token. */
export async function useSetupToken(db: Kysely<GatewayDb>, tokenHash: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('setup_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function setupTokenValid(db: Kysely<GatewayDb>, tokenHash: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('setup_tokens')
    .select('token_hash')
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}
