// The operator commands behind `npm run admin` (cli.ts prints their lines; the usage is listed there).
import { parseArgs } from 'node:util';
import { MAX_RETENTION_DAYS } from '@postline/contracts';
import { createDb, ensureDatabase, isUuid, newId } from '@postline/platform';
import { loadConfig, SCHEMA } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import type { GatewayDb } from '../db/schema.ts';
import { insertTeam, setTeamAccess, setTeamRateLimit, setTeamRetention } from '../db/teams.ts';
import { issueApiKey } from '../use-cases/api-keys.ts';
import { createKeyCommand, KEY_USAGE } from './keys.ts';
import { REPUTATION_USAGE, teamReputationCommand } from './reputation.ts';
import { createUserCommand, USER_USAGE } from './users.ts';
import { DEAD_LETTERS_USAGE, deadLetters, UsageError, type Line } from './dead-letters.ts';

export { UsageError, type Line };

const USAGE = `usage:
  team create --name NAME
  team disable --team ID
  team enable --team ID
  team set-rate-limit --team ID --per-second N
  team set-retention --team ID --days N
${REPUTATION_USAGE}
${USER_USAGE}
${KEY_USAGE}
${DEAD_LETTERS_USAGE}`;

/** Runs one operator command (its words, as after `npm run admin --`): the JSON lines it prints. */
export async function runAdminCommand(argv: string[]): Promise<Line[]> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        team: { type: 'string' },
        'per-second': { type: 'string' },
        days: { type: 'string' },
        'bounce-rate': { type: 'string' },
        'complaint-rate': { type: 'string' },
        window: { type: 'string' },
        'min-sends': { type: 'string' },
        queue: { type: 'string' },
        limit: { type: 'string' },
        email: { type: 'string' },
        role: { type: 'string' },
        permission: { type: 'string' },
        'expires-at': { type: 'string' },
      },
    });
  } catch (err) {
    throw new UsageError(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  }
  const { positionals, values } = parsed;
  const [noun, verb] = positionals;
  if (noun === 'dead-letters') return deadLetters(verb, values, process.env);
  if (noun === 'user') {
    if (verb !== 'create') throw new UsageError(USAGE);
    return [await createUserCommand(values)];
  }
  if (noun === 'key') {
    if (verb !== 'create') throw new UsageError(USAGE);
    return [await createKeyCommand(values)];
  }
  if (noun !== 'team' || !verb) throw new UsageError(USAGE);
  if (verb === 'set-reputation' || verb === 'clear-reputation') {
    return [await teamReputationCommand(values, verb === 'clear-reputation')];
  }
  return [await team(verb, values)];
}

async function team(
  verb: string,
  values: { name?: string; team?: string; 'per-second'?: string; days?: string },
): Promise<Line> {
  const config = loadConfig();
  await ensureDatabase(config.DATABASE_URL);
  const { db } = createDb<GatewayDb>({ url: config.DATABASE_URL, schema: SCHEMA, max: 1 });
  try {
    await migrate(db);
    const teamId = () => {
      if (!values.team || !isUuid(values.team)) throw new UsageError('--team must be a team id');
      return values.team;
    };
    switch (verb) {
      case 'create': {
        const name = values.name?.trim();
        if (!name) throw new UsageError('--name is required');
        return await db.transaction().execute(async (trx) => {
          const team = await insertTeam(trx, { id: newId(), name });
          const { token } = await issueApiKey(trx, {
            teamId: team.id,
            name: 'Default',
            permission: 'full_access',
            domainId: null,
          });
          return { team_id: team.id, api_key: token };
        });
      }
      case 'disable':
      case 'enable': {
        const id = teamId();
        if (!(await setTeamAccess(db, id, verb === 'enable'))) throw new Error(`no team ${id}`);
        return { team_id: id, access_enabled: verb === 'enable' };
      }
      case 'set-rate-limit': {
        const id = teamId();
        const perSecond = Number(values['per-second']);
        if (!Number.isInteger(perSecond) || perSecond < 1)
          throw new UsageError('--per-second must be a positive integer');
        if (!(await setTeamRateLimit(db, id, perSecond))) throw new Error(`no team ${id}`);
        return { team_id: id, rate_limit_per_second: perSecond };
      }
      case 'set-retention': {
        const id = teamId();
        const days = Number(values.days);
        if (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS)
          throw new UsageError(`--days must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}`);
        // The gateway's retention-sync job tells the other owners within seconds (teams.retention_unsynced).
        if (!(await setTeamRetention(db, id, days, new Date()))) throw new Error(`no team ${id}`);
        return { team_id: id, retention_days: days };
      }
      default:
        throw new UsageError(USAGE);
    }
  } finally {
    await db.destroy();
  }
}
