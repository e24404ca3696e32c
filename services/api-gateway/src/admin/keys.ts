// `npm run admin -- key create`: an API key for an existing team (admin/cli.ts).
import { createDb, ensureDatabase, isUuid } from '@postline/platform';
import { loadConfig, SCHEMA } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import type { GatewayDb } from '../db/schema.ts';
import { checkKeyExpiry, issueApiKey } from '../use-cases/api-keys.ts';
import { UsageError, type Line } from './dead-letters.ts';

export const KEY_USAGE =
  '  key create --team ID --name NAME [--permission full_access|sending_access] [--expires-at ISO]';

/** Issues a key for a team, as POST /api-keys does (no domain scope); the token is printed this once. */
export async function createKeyCommand(values: {
  team?: string;
  name?: string;
  permission?: string;
  'expires-at'?: string;
}): Promise<Line> {
  const teamId = values.team;
  if (!teamId || !isUuid(teamId)) throw new UsageError('--team must be a team id');
  const name = values.name?.trim();
  if (!name || name.length > 50) throw new UsageError('--name is required (at most 50 characters)');
  const permission = values.permission ?? 'full_access';
  if (permission !== 'full_access' && permission !== 'sending_access') {
    throw new UsageError('--permission must be full_access or sending_access');
  }
  let expiresAt: Date | null = null;
  if (values['expires-at'] !== undefined) {
    expiresAt = new Date(values['expires-at']);
    if (!/^\d{4}-\d\d-\d\d/.test(values['expires-at']) || Number.isNaN(expiresAt.getTime())) {
      throw new UsageError('--expires-at must be an ISO 8601 time, such as 2027-01-31T00:00:00Z');
    }
    try {
      checkKeyExpiry(expiresAt, new Date());
    } catch {
      throw new UsageError('--expires-at must be in the future');
    }
  }
  const config = loadConfig();
  await ensureDatabase(config.DATABASE_URL);
  const { db } = createDb<GatewayDb>({ url: config.DATABASE_URL, schema: SCHEMA, max: 1 });
  try {
    await migrate(db);
    const team = await db.selectFrom('teams').select('id').where('id', '=', teamId).executeTakeFirst();
    if (!team) throw new Error(`no team ${teamId}`);
    const { key, token } = await issueApiKey(db, { teamId, name, permission, domainId: null, expiresAt });
    return { id: key.id, token };
  } finally {
    await db.destroy();
  }
}
