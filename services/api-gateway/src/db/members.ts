import { sql, type Kysely } from 'kysely';
import type { GatewayDb, Role } from './schema.ts';

export async function listMembers(db: Kysely<GatewayDb>, teamId: string) {
  return db
    .selectFrom('team_members')
    .innerJoin('users', 'users.id', 'team_members.user_id')
    .select(['users.id', 'users.email', 'users.name', 'team_members.role', 'team_members.created_at'])
    .where('team_members.team_id', '=', teamId)
    .orderBy('team_members.created_at')
    .orderBy('users.id')
    .execute();
}

/** The addresses of a team's members, lower-case. */
export async function memberAddresses(db: Kysely<GatewayDb>, teamId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('team_members')
    .innerJoin('users', 'users.id', 'team_members.user_id')
    .select(sql<string>`lower(users.email)`.as('email'))
    .where('team_members.team_id', '=', teamId)
    .execute();
  return rows.map((row) => row.email);
}

/**
 * A team's member addresses, each team's read at most once per `ttlMs`. They only widen where the onboarding
 * sender may send, and its emails to members never leave the install, so a list a few seconds old is harmless.
 */
export function createMemberAddresses(
  db: Kysely<GatewayDb>,
  opts: { ttlMs?: number; maxTeams?: number; now?: () => number } = {},
): (teamId: string) => Promise<readonly string[]> {
  const ttlMs = opts.ttlMs ?? 30_000;
  const maxTeams = opts.maxTeams ?? 10_000;
  const now = opts.now ?? Date.now;
  const kept = new Map<string, { at: number; addresses: Promise<string[]> }>();
  return (teamId) => {
    const hit = kept.get(teamId);
    if (hit && now() - hit.at < ttlMs) return hit.addresses;
    // Entries stay in the order they were read: the oldest read goes first when the map is full.
    if (hit) kept.delete(teamId);
    else if (kept.size >= maxTeams) kept.delete(kept.keys().next().value as string);
    const addresses = memberAddresses(db, teamId);
    kept.set(teamId, { at: now(), addresses });
    // A failed read is not kept (unless a newer one replaced it): the next send reads again.
    addresses.catch(() => {
      if (kept.get(teamId)?.addresses === addresses) kept.delete(teamId);
    });
    return addresses;
  };
}

/** The member's role, locking the team's memberships so that two changes cannot both remove the last admin. */
export async function lockMembers(db: Kysely<GatewayDb>, teamId: string): Promise<Map<string, Role>> {
  const rows = await db
    .selectFrom('team_members')
    .select(['user_id', 'role'])
    .where('team_id', '=', teamId)
    .forUpdate()
    .execute();
  return new Map(rows.map((r) => [r.user_id, r.role]));
}

export async function setRole(db: Kysely<GatewayDb>, teamId: string, userId: string, role: Role): Promise<void> {
  await db
    .updateTable('team_members')
    .set({ role })
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .execute();
}

export async function removeMember(db: Kysely<GatewayDb>, teamId: string, userId: string): Promise<void> {
  await db.deleteFrom('team_members').where('team_id', '=', teamId).where('user_id', '=', userId).execute();
}

export async function insertInvite(
  db: Kysely<GatewayDb>,
  invite: {
    id: string;
    team_id: string;
    email: string;
    role: Role;
    token_hash: string;
    invited_by: string;
    expires_at: Date;
  },
) {
  return db
    .insertInto('invites')
    .values({ ...invite, accepted_at: null, revoked_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listPendingInvites(db: Kysely<GatewayDb>, teamId: string, now: Date) {
  return db
    .selectFrom('invites')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .execute();
}

export async function revokeInvite(db: Kysely<GatewayDb>, teamId: string, id: string): Promise<boolean> {
  const r = await db
    .updateTable('invites')
    .set({ revoked_at: sql<Date>`now()` })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** The pending, unexpired invite of that token with its team's name. */
export async function findPendingInvite(db: Kysely<GatewayDb>, tokenHash: string, now: Date) {
  return db
    .selectFrom('invites')
    .innerJoin('teams', 'teams.id', 'invites.team_id')
    .selectAll('invites')
    .select('teams.name as team_name')
    .where('invites.token_hash', '=', tokenHash)
    .where('invites.accepted_at', 'is', null)
    .where('invites.revoked_at', 'is', null)
    .where('invites.expires_at', '>', now)
    .executeTakeFirst();
}

/** Accepts an invite once: true only for the first acceptance of a pending, unexpired invite. */
export async function acceptInvite(db: Kysely<GatewayDb>, id: string, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('invites')
    .set({ accepted_at: now })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function insertPasswordReset(
  db: Kysely<GatewayDb>,
  reset: { token_hash: string; user_id: string; created_by: string; expires_at: Date },
): Promise<void> {
  await db
    .insertInto('password_resets')
    .values({ ...reset, used_at: null })
    .execute();
}

/** Uses a reset link once: the user it resets, or undefined when used, expired or unknown. */
export async function usePasswordReset(
  db: Kysely<GatewayDb>,
  tokenHash: string,
  now: Date,
): Promise<string | undefined> {
  const row = await db
    .updateTable('password_resets')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}
