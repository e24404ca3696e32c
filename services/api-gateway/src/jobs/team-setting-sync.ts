// A team setting the operator changes in the gateway (its retention, its reputation guard lines), pushed to
// the owners that keep a copy. The gateway has no broker: what it tells owners goes over their internal
// HTTP APIs, as its forwarded requests do. A change is marked on the team row in the statement that makes
// it, and this job pushes each marked team to every owner until all have answered, then clears the mark: an
// owner down for a while is told when it is back, and a push repeated after a restart changes nothing (each
// owner keeps the latest change by its changed_at).
import { createIntervalJob, TEAM_HEADER, type IntervalJob, type Logger } from '@postline/platform';

/** Teams pushed per run: a change is rare; a page keeps one run short whatever the operator did. */
export const SYNC_PAGE = 100;

/** A team whose last change the owners have yet to be told of. */
export type UnsyncedSetting = { id: string; changedAt: Date; body: unknown };

export function createTeamSettingSync(deps: {
  /** The job's name, in logs. */
  name: string;
  logger: Logger;
  /** The base URLs of the owners that keep a copy. */
  owners: readonly string[];
  /** The owners' internal path the change is PUT to, the team in the gateway's header. */
  path: string;
  /** Up to `limit` teams marked as changed. */
  unsynced: (limit: number) => Promise<UnsyncedSetting[]>;
  /** Clears a team's mark unless it was changed again after `changedAt`. */
  markSynced: (teamId: string, changedAt: Date) => Promise<void>;
  everyMs: number;
}): IntervalJob & { runOnce: () => Promise<number> } {
  const push = async (owner: string, team: UnsyncedSetting): Promise<boolean> => {
    try {
      const response = await fetch(new URL(deps.path, owner), {
        method: 'PUT',
        headers: { [TEAM_HEADER]: team.id, 'content-type': 'application/json' },
        body: JSON.stringify(team.body),
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel();
      if (response.ok) return true;
      deps.logger.warn({ owner, team_id: team.id, status: response.status }, `${deps.name}: push refused; retried`);
    } catch (err) {
      deps.logger.warn({ err, owner, team_id: team.id }, `${deps.name}: push not answered; retried`);
    }
    return false;
  };
  /** Teams whose change every owner now holds. */
  const runOnce = async (): Promise<number> => {
    let synced = 0;
    for (const team of await deps.unsynced(SYNC_PAGE)) {
      const answers = await Promise.all(deps.owners.map((owner) => push(owner, team)));
      if (answers.every(Boolean)) {
        await deps.markSynced(team.id, team.changedAt);
        synced++;
      }
    }
    return synced;
  };
  return {
    ...createIntervalJob({ name: deps.name, everyMs: deps.everyMs, run: runOnce, logger: deps.logger }),
    runOnce,
  };
}
