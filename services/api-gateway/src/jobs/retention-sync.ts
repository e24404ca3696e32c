// The teams' retention, pushed to the owners of rows that age out. The gateway has no broker: what it tells
// owners goes over their internal HTTP APIs, as its forwarded requests do. A change is marked on the team row
// in the statement that makes it (teams.retention_unsynced), and this job pushes each marked team to every
// owner until all have answered, then clears the mark: an owner down for a while is told when it is back,
// and a push repeated after a restart changes nothing (each owner keeps the latest change by changed_at).
import type { Kysely } from 'kysely';
import type { TeamRetentionUpdate } from '@postline/contracts';
import { createIntervalJob, TEAM_HEADER, TEAM_RETENTION_PATH, type IntervalJob, type Logger } from '@postline/platform';
import type { GatewayDb } from '../db/schema.ts';
import { markRetentionSynced, unsyncedRetention, type UnsyncedRetention } from '../db/teams.ts';

/** Teams pushed per run: a change is rare; a page keeps one run short whatever the operator did. */
const PAGE = 100;

export function createRetentionSync(deps: {
  db: Kysely<GatewayDb>;
  logger: Logger;
  /** The base URLs of the owners that keep a copy. */
  owners: readonly string[];
  everyMs: number;
}): IntervalJob & { runOnce: () => Promise<number> } {
  const push = async (owner: string, team: UnsyncedRetention): Promise<boolean> => {
    const body: TeamRetentionUpdate = { days: team.days, changed_at: team.changedAt.toISOString() };
    try {
      const response = await fetch(new URL(TEAM_RETENTION_PATH, owner), {
        method: 'PUT',
        headers: { [TEAM_HEADER]: team.id, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel();
      if (response.ok) return true;
      deps.logger.warn({ owner, team_id: team.id, status: response.status }, 'retention push refused; retried');
    } catch (err) {
      deps.logger.warn({ err, owner, team_id: team.id }, 'retention push not answered; retried');
    }
    return false;
  };
  /** Teams whose change every owner now holds. */
  const runOnce = async (): Promise<number> => {
    let synced = 0;
    for (const team of await unsyncedRetention(deps.db, PAGE)) {
      const answers = await Promise.all(deps.owners.map((owner) => push(owner, team)));
      if (answers.every(Boolean)) {
        await markRetentionSynced(deps.db, team.id, team.changedAt);
        synced++;
      }
    }
    return synced;
  };
  return {
    ...createIntervalJob({ name: 'retention-sync', everyMs: deps.everyMs, run: runOnce, logger: deps.logger }),
    runOnce,
  };
}
