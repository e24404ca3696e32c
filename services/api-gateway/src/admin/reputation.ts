// `npm run admin -- team set-reputation | clear-reputation`: the reputation guard's lines for one team, over
// the install's (the sender's REPUTATION_* variables). The gateway stores them on the team and its
// reputation-sync job tells the sender within seconds (teams.reputation_unsynced); docs/reputation.md.
import { ReputationRate, ReputationSends } from '@postline/contracts';
import { createDb, ensureDatabase, isUuid } from '@postline/platform';
import { loadConfig, SCHEMA } from '../config.ts';
import { migrate } from '../db/migrate.ts';
import type { GatewayDb } from '../db/schema.ts';
import { lockTeamReputation, setTeamReputation, type TeamReputationLines } from '../db/teams.ts';
import { UsageError, type Line } from './dead-letters.ts';

export const REPUTATION_USAGE = `  team set-reputation --team ID [--bounce-rate R] [--complaint-rate R] [--window N] [--min-sends N]
      (rates as fractions, 0.05 is 5%; a line given as "default" takes the install's again)
  team clear-reputation --team ID`;

export type ReputationOptions = {
  team?: string;
  'bounce-rate'?: string;
  'complaint-rate'?: string;
  window?: string;
  'min-sends'?: string;
};

/**
 * Sets the lines given (the others stay as they were) and prints the team's own lines, null for each it takes
 * from the install. `clear`: every line back to the install's.
 */
export async function teamReputationCommand(values: ReputationOptions, clear: boolean): Promise<Line> {
  const teamId = values.team;
  if (!teamId || !isUuid(teamId)) throw new UsageError('--team must be a team id');
  const given = clear ? { bounceRate: null, complaintRate: null, window: null, minSends: null } : linesGiven(values);
  if (Object.keys(given).length === 0) {
    throw new UsageError(`give at least one line to set\n${REPUTATION_USAGE}`);
  }
  const config = loadConfig();
  await ensureDatabase(config.DATABASE_URL);
  const { db } = createDb<GatewayDb>({ url: config.DATABASE_URL, schema: SCHEMA, max: 1 });
  try {
    await migrate(db);
    const lines = await db.transaction().execute(async (trx) => {
      const current = await lockTeamReputation(trx, teamId);
      if (!current) throw new Error(`no team ${teamId}`);
      const next: TeamReputationLines = { ...current, ...given };
      if (next.window !== null && next.minSends !== null && next.minSends > next.window) {
        throw new UsageError(`--min-sends (${next.minSends}) must not be above the team's window (${next.window})`);
      }
      await setTeamReputation(trx, teamId, next, new Date());
      return next;
    });
    return {
      team_id: teamId,
      reputation_thresholds: {
        bounce_rate: lines.bounceRate,
        complaint_rate: lines.complaintRate,
        window: lines.window,
        min_sends: lines.minSends,
      },
    };
  } finally {
    await db.destroy();
  }
}

/** The lines the options give: a value, or null for `default`. */
function linesGiven(values: ReputationOptions): Partial<TeamReputationLines> {
  const given: Partial<TeamReputationLines> = {};
  const rate = (option: 'bounce-rate' | 'complaint-rate'): number | null | undefined => {
    const value = values[option];
    if (value === undefined || value === 'default') return value === undefined ? undefined : null;
    const parsed = ReputationRate.safeParse(value.trim() === '' ? Number.NaN : Number(value));
    if (!parsed.success)
      throw new UsageError(`--${option} must be a fraction above 0 and at most 1 (0.05 is 5%), or default`);
    return parsed.data;
  };
  const sends = (option: 'window' | 'min-sends'): number | null | undefined => {
    const value = values[option];
    if (value === undefined || value === 'default') return value === undefined ? undefined : null;
    const parsed = ReputationSends.safeParse(value.trim() === '' ? Number.NaN : Number(value));
    if (!parsed.success)
      throw new UsageError(`--${option} must be a whole number of sends from 1 to 1000000, or default`);
    return parsed.data;
  };
  const bounceRate = rate('bounce-rate');
  const complaintRate = rate('complaint-rate');
  const window = sends('window');
  const minSends = sends('min-sends');
  if (bounceRate !== undefined) given.bounceRate = bounceRate;
  if (complaintRate !== undefined) given.complaintRate = complaintRate;
  if (window !== undefined) given.window = window;
  if (minSends !== undefined) given.minSends = minSends;
  return given;
}
