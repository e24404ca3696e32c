// `npm run admin -- user create`: a dashboard user for an existing team (admin/cli.ts).
import { createDb, ensureDatabase, isUuid, newId, randomToken } from '@postline/platform';
import { hashPassword } from '../accounts/password.ts';
import { loadConfig, SCHEMA } from '../config.ts';
import { addMember, findUserByEmail, insertUser } from '../db/accounts.ts';
import { migrate } from '../db/migrate.ts';
import type { GatewayDb } from '../db/schema.ts';
import { UsageError, type Line } from './dead-letters.ts';

export const USER_USAGE = '  user create --team ID --email EMAIL --name NAME [--role admin|member]';

/**
 * Adds a user to a team with a role (admin by default). A new user gets a random password, printed once for the
 * operator to hand over (the user changes it after signing in); an existing user keeps theirs.
 */
export async function createUserCommand(values: {
  team?: string;
  email?: string;
  name?: string;
  role?: string;
}): Promise<Line> {
  const teamId = values.team;
  if (!teamId || !isUuid(teamId)) throw new UsageError('--team must be a team id');
  const email = values.email?.trim();
  if (!email || !/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError('--email must be an email address');
  const role = values.role ?? 'admin';
  if (role !== 'admin' && role !== 'member') throw new UsageError('--role must be admin or member');
  const config = loadConfig();
  await ensureDatabase(config.DATABASE_URL);
  const { db } = createDb<GatewayDb>({ url: config.DATABASE_URL, schema: SCHEMA, max: 1 });
  try {
    await migrate(db);
    const team = await db.selectFrom('teams').select('id').where('id', '=', teamId).executeTakeFirst();
    if (!team) throw new Error(`no team ${teamId}`);
    const existing = await findUserByEmail(db, email);
    const password = existing ? undefined : randomToken(15);
    const passwordHash = password ? await hashPassword(password) : undefined;
    return await db.transaction().execute(async (trx) => {
      let userId = existing?.id;
      if (!userId) {
        const name = values.name?.trim();
        if (!name) throw new UsageError('--name is required for a new user');
        userId = (await insertUser(trx, { id: newId(), email, name, password_hash: passwordHash! })).id;
      }
      const member = await trx
        .selectFrom('team_members')
        .select('role')
        .where('team_id', '=', teamId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (member) throw new UsageError(`${email} is already a member of team ${teamId}`);
      await addMember(trx, teamId, userId, role);
      return { user_id: userId, team_id: teamId, email, role, ...(password ? { password } : {}) };
    });
  } finally {
    await db.destroy();
  }
}
