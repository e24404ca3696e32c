// The reputation guard lines the operator set for teams, pushed to the sender (whose guard uses them) until
// it holds the latest change (team-setting-sync.ts; teams.reputation_unsynced marks a change).
import type { Kysely } from 'kysely';
import { TEAM_REPUTATION_PATH, type TeamReputationUpdate } from '@postline/contracts';
import type { IntervalJob, Logger } from '@postline/platform';
import type { GatewayDb } from '../db/schema.ts';
import { markReputationSynced, unsyncedReputation } from '../db/teams.ts';
import { createTeamSettingSync } from './team-setting-sync.ts';

export function createReputationSync(deps: {
  db: Kysely<GatewayDb>;
  logger: Logger;
  /** The sender's base URL. */
  sender: string;
  everyMs: number;
}): IntervalJob & { runOnce: () => Promise<number> } {
  return createTeamSettingSync({
    name: 'reputation-sync',
    logger: deps.logger,
    owners: [deps.sender],
    path: TEAM_REPUTATION_PATH,
    everyMs: deps.everyMs,
    unsynced: async (limit) =>
      (await unsyncedReputation(deps.db, limit)).map(({ id, lines, changedAt }) => ({
        id,
        changedAt,
        body: {
          thresholds: {
            bounce_rate: lines.bounceRate,
            complaint_rate: lines.complaintRate,
            window: lines.window,
            min_sends: lines.minSends,
          },
          changed_at: changedAt.toISOString(),
        } satisfies TeamReputationUpdate,
      })),
    markSynced: (teamId, changedAt) => markReputationSynced(deps.db, teamId, changedAt),
  });
}
