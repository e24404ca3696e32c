// The reputation guard's tables (migrations 202612101000, 202612111000): the deltas recorded outcomes append,
// the windows and buckets the fold keeps, the pauses, the delivery commands parked while paused, and the
// lines the operator set for teams.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { ReputationDeltasTable, SenderDb } from '../../db/schema.ts';
import {
  BUCKETS,
  type PauseReason,
  type SendingPause,
  type TeamThresholds,
  type WindowCounts,
} from '../domain/reputation.ts';

/** The domain_id of a team's own window and pause (the team as a whole). */
export const TEAM_SCOPE = '00000000-0000-0000-0000-000000000000';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

export type ReputationDelta = { teamId: string; domainId: string } & WindowCounts;

/** Appends what recorded outcomes add, in one statement (no counter row is locked on the hot path). */
export async function addReputationDeltas(
  trx: Transaction<SenderDb>,
  deltas: readonly ReputationDelta[],
  at: Date,
): Promise<void> {
  const rows = deltas.filter((d) => d.sends > 0 || d.bounces > 0 || d.complaints > 0);
  if (rows.length === 0) return;
  await trx
    .insertInto('reputation_deltas')
    .values(
      rows.map((d) => ({
        team_id: d.teamId,
        domain_id: d.domainId,
        recorded_at: at,
        sends: d.sends,
        bounces: d.bounces,
        complaints: d.complaints,
      })),
    )
    .execute();
}

export type TakenDelta = ReputationDelta & { recordedAt: Date };

/** Takes (deletes and returns) up to `limit` of the oldest deltas; skip locked, so concurrent folds never share one. */
export async function takeReputationDeltas(trx: Transaction<SenderDb>, limit: number): Promise<TakenDelta[]> {
  const { rows } = await sql<Omit<Selectable<ReputationDeltasTable>, 'id'>>`delete from reputation_deltas where id in (
      select id from reputation_deltas order by id limit ${limit} for update skip locked)
    returning team_id, domain_id, recorded_at, sends, bounces, complaints`.execute(trx);
  return rows.map((r) => ({
    teamId: r.team_id,
    domainId: r.domain_id,
    recordedAt: r.recorded_at,
    sends: r.sends,
    bounces: r.bounces,
    complaints: r.complaints,
  }));
}

export type WindowRow = {
  teamId: string;
  domainId: string;
  totalSends: number;
  countsSince: Date | null;
  /** The bucket size its buckets were cut by; null: the install's (a window from before sizes were kept). */
  bucketSends: number | null;
};

/** The windows of `scopes`, created if missing and locked (in key order, so concurrent folds do not deadlock). */
export async function lockWindows(
  trx: Transaction<SenderDb>,
  scopes: readonly { teamId: string; domainId: string }[],
): Promise<WindowRow[]> {
  const sorted = [...scopes].sort((a, b) =>
    a.teamId === b.teamId ? (a.domainId < b.domainId ? -1 : 1) : a.teamId < b.teamId ? -1 : 1,
  );
  const teams = sorted.map((s) => s.teamId);
  const domains = sorted.map((s) => s.domainId);
  await sql`insert into reputation_windows (team_id, domain_id)
    select * from unnest(${teams}::uuid[], ${domains}::uuid[]) on conflict do nothing`.execute(trx);
  const { rows } = await sql<{
    team_id: string;
    domain_id: string;
    total_sends: string;
    counts_since: Date | null;
    bucket_sends: number | null;
  }>`
    select w.team_id, w.domain_id, w.total_sends, w.counts_since, w.bucket_sends from reputation_windows w
    join unnest(${teams}::uuid[], ${domains}::uuid[]) as q (team_id, domain_id)
      on w.team_id = q.team_id and w.domain_id = q.domain_id
    order by w.team_id, w.domain_id for update of w`.execute(trx);
  return rows.map((r) => ({
    teamId: r.team_id,
    domainId: r.domain_id,
    totalSends: Number(r.total_sends),
    countsSince: r.counts_since,
    bucketSends: r.bucket_sends,
  }));
}

/**
 * Cuts a window's buckets again by a new bucket size (its team's window changed): what the window holds (its
 * last BUCKETS buckets by the old size) becomes one bucket, the one its sends go to next by the new size, so
 * that it keeps being judged on the same outcomes and they leave it as a window's worth of new sends comes.
 */
export async function rebaseWindow(
  trx: Transaction<SenderDb>,
  window: { teamId: string; domainId: string; totalSends: number },
  sizes: { from: number; to: number },
): Promise<void> {
  const { teamId, domainId, totalSends } = window;
  const kept = Math.floor(totalSends / sizes.from) - BUCKETS;
  await sql`with old as (delete from reputation_buckets where team_id = ${teamId} and domain_id = ${domainId}
      returning bucket, sends, bounces, complaints)
    insert into reputation_buckets (team_id, domain_id, bucket, sends, bounces, complaints)
    select ${teamId}, ${domainId}, ${Math.floor(totalSends / sizes.to)}, sum(sends), sum(bounces), sum(complaints)
    from old where bucket > ${kept} having count(*) > 0`.execute(trx);
  await sql`update reputation_windows set bucket_sends = ${sizes.to}
    where team_id = ${teamId} and domain_id = ${domainId}`.execute(trx);
}

/**
 * Adds counts to a window's bucket `bucket` (its buckets cut by `bucketSends`), moves its total on by their
 * sends, drops the buckets that left the window, and returns what the window holds now (its last BUCKETS
 * buckets).
 */
export async function addToWindow(
  trx: Transaction<SenderDb>,
  window: { teamId: string; domainId: string },
  bucket: number,
  bucketSends: number,
  counts: WindowCounts,
): Promise<WindowCounts> {
  const { teamId, domainId } = window;
  await sql`insert into reputation_buckets (team_id, domain_id, bucket, sends, bounces, complaints)
    values (${teamId}, ${domainId}, ${bucket}, ${counts.sends}, ${counts.bounces}, ${counts.complaints})
    on conflict (team_id, domain_id, bucket) do update set sends = reputation_buckets.sends + excluded.sends,
      bounces = reputation_buckets.bounces + excluded.bounces,
      complaints = reputation_buckets.complaints + excluded.complaints`.execute(trx);
  await sql`update reputation_windows set total_sends = total_sends + ${counts.sends}, bucket_sends = ${bucketSends}
    where team_id = ${teamId} and domain_id = ${domainId}`.execute(trx);
  const { rows } = await sql<{ sends: string; bounces: string; complaints: string }>`
    with dropped as (delete from reputation_buckets
      where team_id = ${teamId} and domain_id = ${domainId} and bucket <= ${bucket - BUCKETS})
    select coalesce(sum(sends), 0) as sends, coalesce(sum(bounces), 0) as bounces,
      coalesce(sum(complaints), 0) as complaints
    from reputation_buckets where team_id = ${teamId} and domain_id = ${domainId} and bucket > ${bucket - BUCKETS}`.execute(
    trx,
  );
  const row = rows[0];
  return {
    sends: Number(row?.sends ?? 0),
    bounces: Number(row?.bounces ?? 0),
    complaints: Number(row?.complaints ?? 0),
  };
}

/**
 * Forgets a domain's window, or for the team (TEAM_SCOPE) every window of the team: each counts again from
 * `since` (a resume), so that old outcomes cannot pause it again.
 */
export async function resetWindows(
  trx: Transaction<SenderDb>,
  window: { teamId: string; domainId: string },
  since: Date,
): Promise<void> {
  const { teamId, domainId } = window;
  const all = domainId === TEAM_SCOPE;
  await sql`delete from reputation_buckets where team_id = ${teamId}
    ${all ? sql`` : sql`and domain_id = ${domainId}`}`.execute(trx);
  await sql`insert into reputation_windows (team_id, domain_id, counts_since) values (${teamId}, ${domainId}, ${since})
    on conflict (team_id, domain_id) do update set counts_since = excluded.counts_since`.execute(trx);
  if (all) await sql`update reputation_windows set counts_since = ${since} where team_id = ${teamId}`.execute(trx);
}

/**
 * What a team's windows hold now: its own (domain_id TEAM_SCOPE) and each of its domains', each by the bucket
 * size its buckets were cut by (`installBucketSends` for a window from before sizes were kept).
 */
export async function readWindows(
  db: Db,
  teamId: string,
  installBucketSends: number,
): Promise<(WindowCounts & { domainId: string })[]> {
  const { rows } = await sql<{ domain_id: string; sends: string; bounces: string; complaints: string }>`
    select w.domain_id, coalesce(sum(b.sends), 0) as sends, coalesce(sum(b.bounces), 0) as bounces,
      coalesce(sum(b.complaints), 0) as complaints
    from reputation_windows w left join reputation_buckets b on b.team_id = w.team_id and b.domain_id = w.domain_id
      and b.bucket > floor(w.total_sends / coalesce(w.bucket_sends, ${installBucketSends})) - ${BUCKETS}
    where w.team_id = ${teamId} group by w.domain_id`.execute(db);
  return rows.map((r) => ({
    domainId: r.domain_id,
    sends: Number(r.sends),
    bounces: Number(r.bounces),
    complaints: Number(r.complaints),
  }));
}

export type PauseRow = {
  teamId: string;
  domainId: string;
  domainName: string | null;
  reason: PauseReason;
  sends: number;
  bounceRate: number;
  complaintRate: number;
  /** The line (threshold) the rate crossed. */
  line: number;
  pausedAt: Date;
};

function pauseOf(row: {
  team_id: string;
  domain_id: string;
  domain_name: string | null;
  reason: PauseReason;
  sends: string | number;
  bounce_rate: number;
  complaint_rate: number;
  line: number;
  paused_at: Date;
}): PauseRow {
  return {
    teamId: row.team_id,
    domainId: row.domain_id,
    domainName: row.domain_name,
    reason: row.reason,
    sends: Number(row.sends),
    bounceRate: row.bounce_rate,
    complaintRate: row.complaint_rate,
    line: row.line,
    pausedAt: row.paused_at,
  };
}

/** Pauses a team or domain unless it is paused already; true when this call paused it. */
export async function insertPause(trx: Transaction<SenderDb>, pause: PauseRow): Promise<boolean> {
  const inserted = await trx
    .insertInto('reputation_pauses')
    .values({
      team_id: pause.teamId,
      domain_id: pause.domainId,
      domain_name: pause.domainName,
      reason: pause.reason,
      sends: pause.sends,
      bounce_rate: pause.bounceRate,
      complaint_rate: pause.complaintRate,
      line: pause.line,
      paused_at: pause.pausedAt,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('team_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Which of `teamIds` are paused as a whole. */
export async function pausedTeams(db: Db, teamIds: readonly string[]): Promise<string[]> {
  if (teamIds.length === 0) return [];
  const rows = await db
    .selectFrom('reputation_pauses')
    .select('team_id')
    .where('team_id', 'in', [...new Set(teamIds)])
    .where('domain_id', '=', TEAM_SCOPE)
    .execute();
  return rows.map((r) => r.team_id);
}

/** The team's pauses: its own first (if any), then its domains'. */
export async function listPauses(db: Db, teamId: string): Promise<PauseRow[]> {
  const rows = await db
    .selectFrom('reputation_pauses')
    .selectAll()
    .where('team_id', '=', teamId)
    .orderBy('domain_id')
    .execute();
  return rows.map(pauseOf);
}

/**
 * Lifts a domain's pause, or for the team (TEAM_SCOPE) every pause of the team; returns what it lifted.
 * Waits for parking transactions that hold a pause (parkDelivery).
 */
export async function deletePauses(trx: Transaction<SenderDb>, teamId: string, domainId: string): Promise<PauseRow[]> {
  let query = trx.deleteFrom('reputation_pauses').where('team_id', '=', teamId);
  if (domainId !== TEAM_SCOPE) query = query.where('domain_id', '=', domainId);
  const rows = await query.returningAll().execute();
  return rows.map(pauseOf);
}

/** The names of sending domains in the sender's read model, by id. */
export async function domainNames(db: Db, domainIds: readonly string[]): Promise<Map<string, string>> {
  if (domainIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('sending_domains')
    .select(['domain_id', 'name'])
    .where('domain_id', 'in', [...domainIds])
    .execute();
  return new Map(rows.map((r) => [r.domain_id, r.name]));
}

/** Whether `domainId` is one of the team's sending domains. */
export async function isTeamDomain(db: Db, teamId: string, domainId: string): Promise<boolean> {
  const row = await db
    .selectFrom('sending_domains')
    .select('domain_id')
    .where('team_id', '=', teamId)
    .where('domain_id', '=', domainId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Parks a delivery command of a paused team or domain, holding the pause (for share) until the caller
 * commits: a resume deleting the pause waits, then sees the parked row and sends it again. False when the
 * pause is gone (resumed since the attempt was read): the caller sends the command again itself.
 */
export async function parkDelivery(
  trx: Transaction<SenderDb>,
  parked: { teamId: string; domainId: string; command: Record<string, unknown> },
  at: Date,
): Promise<boolean> {
  const { rows } = await sql<{ parked: boolean }>`with held as (
      select 1 from reputation_pauses where team_id = ${parked.teamId}
        and domain_id in (${TEAM_SCOPE}::uuid, ${parked.domainId}::uuid) for share),
    inserted as (insert into parked_deliveries (team_id, domain_id, command, parked_at)
      select ${parked.teamId}, ${parked.domainId}, ${JSON.stringify(parked.command)}::jsonb, ${at}
      where exists (select 1 from held) returning 1)
    select exists (select 1 from inserted) as parked`.execute(trx);
  return rows[0]?.parked ?? false;
}

/** Takes the team's parked commands that no pause holds any longer (after a resume). */
export async function takeReleasedDeliveries(
  trx: Transaction<SenderDb>,
  teamId: string,
): Promise<Record<string, unknown>[]> {
  const { rows } = await sql<{ command: Record<string, unknown> }>`delete from parked_deliveries p
    where p.team_id = ${teamId} and not exists (select 1 from reputation_pauses r
      where r.team_id = p.team_id and r.domain_id in (${TEAM_SCOPE}::uuid, p.domain_id))
    returning p.command`.execute(trx);
  return rows.map((r) => r.command);
}

/** How many teams and domains are paused (the metrics' gauge), from every team: an aggregate, read at scrape time. */
export async function countPauses(db: Db): Promise<{ teams: number; domains: number }> {
  const { rows } = await sql<{ teams: number; domains: number }>`select
      count(*) filter (where domain_id = ${TEAM_SCOPE}::uuid)::int as teams,
      count(*) filter (where domain_id <> ${TEAM_SCOPE}::uuid)::int as domains
    from reputation_pauses`.execute(db);
  return rows[0] ?? { teams: 0, domains: 0 };
}

/** A pause as the message of a refused send states it. */
export function sendingPauseOf(pause: PauseRow): SendingPause {
  return {
    scope: pause.domainId === TEAM_SCOPE ? 'team' : 'domain',
    domain: pause.domainName,
    reason: pause.reason,
    sends: pause.sends,
    bounce_rate: pause.bounceRate,
    complaint_rate: pause.complaintRate,
    line: pause.line,
  };
}

/** The lines the operator set for each of `teamIds` that has any. */
export async function readTeamThresholds(db: Db, teamIds: readonly string[]): Promise<Map<string, TeamThresholds>> {
  if (teamIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('team_reputation_thresholds')
    .selectAll()
    .where('team_id', 'in', [...new Set(teamIds)])
    .execute();
  return new Map(
    rows.map((r) => [
      r.team_id,
      { bounceRate: r.bounce_rate, complaintRate: r.complaint_rate, window: r.window_sends, minSends: r.min_sends },
    ]),
  );
}

/**
 * Stores the lines the operator set for a team (all null: the install's again), unless a later change is
 * stored already: the gateway's pushes may be repeated or reordered.
 */
export async function saveTeamThresholds(
  db: Db,
  teamId: string,
  lines: TeamThresholds,
  changedAt: Date,
): Promise<void> {
  const values = {
    bounce_rate: lines.bounceRate,
    complaint_rate: lines.complaintRate,
    window_sends: lines.window,
    min_sends: lines.minSends,
    changed_at: changedAt,
  };
  await db
    .insertInto('team_reputation_thresholds')
    .values({ team_id: teamId, ...values })
    .onConflict((oc) =>
      oc.column('team_id').doUpdateSet(values).where('team_reputation_thresholds.changed_at', '<=', changedAt),
    )
    .execute();
}
