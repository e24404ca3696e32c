// The reputation guard: folds the outcomes recorded since its last run into each team's and each sending
// domain's window of last sends, and pauses a team or domain whose window is over a line (the install's, or
// the team's own where the operator set them), with `internal.reputation.paused` in the same transaction
// (for the notifier that tells the team's admins).
import type { Kysely } from 'kysely';
import { enqueue, type Logger, type OutboxMessage } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import {
  addToWindow,
  domainNames,
  insertPause,
  lockWindows,
  pausedTeams,
  readTeamThresholds,
  rebaseWindow,
  takeReputationDeltas,
  TEAM_SCOPE,
  type PauseRow,
  type TakenDelta,
} from '../db/reputation.ts';
import {
  bucketOf,
  bucketSize,
  pauseReasonOf,
  ratesOf,
  thresholdsOf,
  type PauseReason,
  type ReputationThresholds,
  type WindowCounts,
} from '../domain/reputation.ts';

export type GuardDeps = {
  db: Kysely<SenderDb>;
  /** The install's lines (REPUTATION_*): a team's own, where the operator set them, take their place. */
  thresholds: ReputationThresholds;
  now: () => Date;
  logger: Logger;
  /** Told each pause made (the metrics' counter). */
  onPaused?: (reason: PauseReason) => void;
};

/** Deltas folded per transaction. */
export const FOLD_BATCH = 5_000;

/**
 * Folds up to FOLD_BATCH deltas and judges the windows they touched; returns how many deltas it folded and the
 * pauses it made. Deltas recorded before a window's `counts_since` (a resume) are dropped.
 */
export async function foldReputation(deps: GuardDeps): Promise<{ folded: number; paused: PauseRow[] }> {
  return deps.db.transaction().execute(async (trx) => {
    const deltas = await takeReputationDeltas(trx, FOLD_BATCH);
    if (deltas.length === 0) return { folded: 0, paused: [] };
    // Each delta counts toward its domain's window and its team's.
    const byScope = new Map<string, { teamId: string; domainId: string; deltas: TakenDelta[] }>();
    const add = (teamId: string, domainId: string, delta: TakenDelta) => {
      const key = `${teamId} ${domainId}`;
      const scope = byScope.get(key) ?? { teamId, domainId, deltas: [] };
      scope.deltas.push(delta);
      byScope.set(key, scope);
    };
    for (const delta of deltas) {
      add(delta.teamId, TEAM_SCOPE, delta);
      if (delta.domainId !== TEAM_SCOPE) add(delta.teamId, delta.domainId, delta);
    }
    const windows = await lockWindows(trx, [...byScope.values()]);
    // Read under the windows' locks: a window is cut by the lines the fold judges it by.
    const own = await readTeamThresholds(
      trx,
      windows.map((w) => w.teamId),
    );
    const linesOf = (teamId: string) => thresholdsOf(deps.thresholds, own.get(teamId));
    const installBucketSends = bucketSize(deps.thresholds.window);
    const now = deps.now();
    const judged: { teamId: string; domainId: string; counts: WindowCounts; lines: ReputationThresholds }[] = [];
    for (const window of windows) {
      const scope = byScope.get(`${window.teamId} ${window.domainId}`);
      const since = window.countsSince?.getTime() ?? -Infinity;
      const counted = (scope?.deltas ?? []).filter((d) => d.recordedAt.getTime() > since);
      const sum = counted.reduce(
        (acc, d) => ({
          sends: acc.sends + d.sends,
          bounces: acc.bounces + d.bounces,
          complaints: acc.complaints + d.complaints,
        }),
        { sends: 0, bounces: 0, complaints: 0 },
      );
      if (sum.sends === 0 && sum.bounces === 0 && sum.complaints === 0) continue;
      const lines = linesOf(window.teamId);
      const size = bucketSize(lines.window);
      // The team's window changed since its buckets were cut: cut them again by the new size.
      const cutBy = window.bucketSends ?? installBucketSends;
      if (cutBy !== size) await rebaseWindow(trx, window, { from: cutBy, to: size });
      const counts = await addToWindow(trx, window, bucketOf(window.totalSends, lines.window), size, sum);
      judged.push({ teamId: window.teamId, domainId: window.domainId, counts, lines });
    }

    const overLine = judged.flatMap((w) => {
      const reason = pauseReasonOf(w.counts, w.lines);
      return reason ? [{ ...w, reason }] : [];
    });
    if (overLine.length === 0) return { folded: deltas.length, paused: [] };
    // A team's pause holds all its domains: a domain is paused on its own only while its team is not.
    const teamsPaused = new Set([
      ...overLine.filter((w) => w.domainId === TEAM_SCOPE).map((w) => w.teamId),
      ...(await pausedTeams(
        trx,
        overLine.map((w) => w.teamId),
      )),
    ]);
    const over = overLine
      .filter((w) => w.domainId === TEAM_SCOPE || !teamsPaused.has(w.teamId))
      .sort((a, b) => (a.domainId === b.domainId ? 0 : a.domainId === TEAM_SCOPE ? -1 : 1));
    const names = await domainNames(
      trx,
      over.map((w) => w.domainId).filter((id) => id !== TEAM_SCOPE),
    );
    const paused: PauseRow[] = [];
    const messages: OutboxMessage[] = [];
    for (const w of over) {
      const rates = ratesOf(w.counts);
      const pause: PauseRow = {
        teamId: w.teamId,
        domainId: w.domainId,
        domainName: w.domainId === TEAM_SCOPE ? null : (names.get(w.domainId) ?? null),
        reason: w.reason,
        sends: w.counts.sends,
        bounceRate: rates.bounceRate,
        complaintRate: rates.complaintRate,
        line: w.reason === 'bounce_rate' ? w.lines.bounceRate : w.lines.complaintRate,
        pausedAt: now,
      };
      if (!(await insertPause(trx, pause))) continue;
      paused.push(pause);
      messages.push(pausedEvent(pause, w.lines));
    }
    if (messages.length > 0) await enqueue(trx, messages);
    for (const pause of paused) {
      deps.onPaused?.(pause.reason);
      deps.logger.warn(
        {
          teamId: pause.teamId,
          domainId: pause.domainId === TEAM_SCOPE ? undefined : pause.domainId,
          reason: pause.reason,
          sends: pause.sends,
          bounceRate: pause.bounceRate,
          complaintRate: pause.complaintRate,
        },
        'reputation guard paused sending',
      );
    }
    return { folded: deltas.length, paused };
  });
}

function pausedEvent(pause: PauseRow, thresholds: ReputationThresholds): OutboxMessage {
  const team = pause.domainId === TEAM_SCOPE;
  return {
    exchange: 'events',
    type: 'internal.reputation.paused',
    team_id: pause.teamId,
    data: {
      scope: team ? 'team' : 'domain',
      domain_id: team ? null : pause.domainId,
      domain: pause.domainName,
      reason: pause.reason,
      sends: pause.sends,
      bounce_rate: pause.bounceRate,
      complaint_rate: pause.complaintRate,
      thresholds: {
        bounce_rate: thresholds.bounceRate,
        complaint_rate: thresholds.complaintRate,
        window: thresholds.window,
        min_sends: thresholds.minSends,
      },
      paused_at: pause.pausedAt.toISOString(),
    },
  };
}
