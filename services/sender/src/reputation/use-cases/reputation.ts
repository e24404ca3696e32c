// A team's reputation as GET /reputation shows it, resuming a paused team or domain (POST
// /reputation/resume), and parking the deliveries of a paused one until then.
import type { Kysely, Transaction } from 'kysely';
import { ApiError, enqueue, notFound, type OutboxMessage } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import {
  deletePauses,
  domainNames,
  isTeamDomain,
  listPauses,
  parkDelivery,
  readTeamThresholds,
  readWindows,
  resetWindows,
  takeReleasedDeliveries,
  TEAM_SCOPE,
  type PauseRow,
} from '../db/reputation.ts';
import {
  bucketSize,
  linesSetFor,
  ratesOf,
  thresholdsOf,
  type ReputationThresholds,
  type ThresholdName,
  type WindowCounts,
} from '../domain/reputation.ts';

export type ReputationDeps = {
  db: Kysely<SenderDb>;
  /** The install's lines (REPUTATION_*); a team's own take their place where the operator set them. */
  thresholds: ReputationThresholds;
  now: () => Date;
};

/** Who resumes: a dashboard user (an admin; a member is refused) or, undefined, a full-access API key. */
export type Actor = { id: string; role: 'admin' | 'member' } | undefined;

export type ReputationScopeView = WindowCounts & {
  bounceRate: number;
  complaintRate: number;
  pause: PauseRow | undefined;
};

export type ReputationView = {
  /** The lines in force for the team, and which of them the operator set for it. */
  thresholds: ReputationThresholds & { setForTeam: ThresholdName[] };
  team: ReputationScopeView;
  domains: (ReputationScopeView & { domainId: string; name: string })[];
};

/** The team's windows and pauses: its own, and each sending domain's that has sent or is paused. */
export async function readReputation(deps: ReputationDeps, teamId: string): Promise<ReputationView> {
  const [windows, pauses, own] = await Promise.all([
    readWindows(deps.db, teamId, bucketSize(deps.thresholds.window)),
    listPauses(deps.db, teamId),
    readTeamThresholds(deps.db, [teamId]).then((lines) => lines.get(teamId)),
  ]);
  const counts = new Map(windows.map((w) => [w.domainId, w]));
  const pauseOf = new Map(pauses.map((p) => [p.domainId, p]));
  const view = (domainId: string): ReputationScopeView => {
    const c = counts.get(domainId) ?? { sends: 0, bounces: 0, complaints: 0 };
    const rates = ratesOf(c);
    return {
      sends: c.sends,
      bounces: c.bounces,
      complaints: c.complaints,
      ...rates,
      pause: pauseOf.get(domainId),
    };
  };
  const domainIds = [...new Set([...counts.keys(), ...pauseOf.keys()])].filter((id) => id !== TEAM_SCOPE);
  const names = await domainNames(deps.db, domainIds);
  return {
    thresholds: { ...thresholdsOf(deps.thresholds, own), setForTeam: linesSetFor(own) },
    team: view(TEAM_SCOPE),
    domains: domainIds
      .flatMap((id) => {
        const name = names.get(id) ?? pauseOf.get(id)?.domainName;
        return name ? [{ ...view(id), domainId: id, name }] : [];
      })
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
  };
}

/**
 * Resumes sending for an admin or a full-access key: without a domain, every pause of the team (its own and
 * its domains'); with one, that domain's. The windows resumed forget the outcomes before now (so that they
 * cannot pause again on them: each is judged again once it holds the minimum volume of new sends), the
 * deliveries parked meanwhile that no pause holds any longer are sent again, and
 * `internal.reputation.resumed` is emitted for each pause lifted; all in one transaction. Resuming what is
 * not paused changes nothing. A domain id that is not one of the team's sending domains is a 404.
 */
export async function resumeSending(
  deps: ReputationDeps,
  teamId: string,
  domainId: string | undefined,
  actor: Actor,
): Promise<ReputationView> {
  if (actor?.role === 'member') throw new ApiError(403, 'invalid_permission', 'Only an admin can resume sending.');
  const scope = domainId ?? TEAM_SCOPE;
  // Another team's domain is not found; a deleted domain of the team's may still be paused.
  if (domainId !== undefined && !(await isTeamDomain(deps.db, teamId, domainId))) {
    const known = (await listPauses(deps.db, teamId)).some((p) => p.domainId === domainId);
    if (!known) throw notFound('Domain not found');
  }
  await deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    const lifted = await deletePauses(trx, teamId, scope);
    if (lifted.length === 0) return;
    await resetWindows(trx, { teamId, domainId: scope }, now);
    const released = await takeReleasedDeliveries(trx, teamId);
    const messages: OutboxMessage[] = released.map((command) => ({
      exchange: 'commands',
      type: 'sender.deliver',
      team_id: teamId,
      data: command as ParkedDelivery['command'],
    }));
    for (const pause of lifted) {
      messages.push({
        exchange: 'events',
        type: 'internal.reputation.resumed',
        team_id: teamId,
        data: {
          scope: pause.domainId === TEAM_SCOPE ? 'team' : 'domain',
          domain_id: pause.domainId === TEAM_SCOPE ? null : pause.domainId,
          domain: pause.domainName,
          resumed_by: actor?.id ?? null,
          resumed_at: now.toISOString(),
        },
      });
    }
    await enqueue(trx, messages);
  });
  return readReputation(deps, teamId);
}

/** A delivery command held back while its team or sending domain is paused. */
export type ParkedDelivery = {
  teamId: string;
  domainId: string;
  command: { email_id: string; domain: string; recipients: number[]; attempt: number; throttled?: number };
};

/**
 * Parks the commands of paused deliveries (their recipients stay pending) in the caller's transaction; a
 * command whose pause was lifted since it was read is sent again at once instead.
 */
export async function parkDeliveries(
  trx: Transaction<SenderDb>,
  parked: readonly ParkedDelivery[],
  now: Date,
): Promise<void> {
  const again: OutboxMessage[] = [];
  for (const p of parked) {
    if (await parkDelivery(trx, { teamId: p.teamId, domainId: p.domainId, command: p.command }, now)) continue;
    again.push({ exchange: 'commands', type: 'sender.deliver', team_id: p.teamId, data: p.command });
  }
  await enqueue(trx, again);
}
