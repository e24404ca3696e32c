// The teams' retention, pushed to the owners of rows that age out (sender, inbound-smtp, webhook-dispatcher)
// until each holds the latest change (team-setting-sync.ts; teams.retention_unsynced marks a change).
import type { Kysely } from 'kysely';
import type { TeamRetentionUpdate } from '@postline/contracts';
import { TEAM_RETENTION_PATH, type IntervalJob, type Logger } from '@postline/platform';
import type { GatewayDb } from '../db/schema.ts';
import { markRetentionSynced, unsyncedRetention } from '../db/teams.ts';
import { createTeamSettingSync } from './team-setting-sync.ts';

export function createRetentionSync(deps: {
  db: Kysely<GatewayDb>;
  logger: Logger;
  /** The base URLs of the owners that keep a copy. */
  owners: readonly string[];
  everyMs: number;
}): IntervalJob & { runOnce: () => Promise<number> } {
  return createTeamSettingSync({
    name: 'retention-sync',
    logger: deps.logger,
    owners: deps.owners,
    path: TEAM_RETENTION_PATH,
    everyMs: deps.everyMs,
    unsynced: async (limit) =>
      (await unsyncedRetention(deps.db, limit)).map((team) => ({
        id: team.id,
        changedAt: team.changedAt,
        body: { days: team.days, changed_at: team.changedAt.toISOString() } satisfies TeamRetentionUpdate,
      })),
    markSynced: (teamId, changedAt) => markRetentionSynced(deps.db, teamId, changedAt),
  });
}
