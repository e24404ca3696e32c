// The sender's read model of sending domains, kept from `internal.domain.state`.
import { sql, type Kysely, type Transaction } from 'kysely';
import { PREPARED } from '@postline/platform';
import type { SenderDb, SendingDomainRow, SendingDomainsTable } from '../../db/schema.ts';
import { TEAM_SCOPE, type SendingPause } from '../../reputation/index.ts';

/**
 * A sending domain as sends look it up: with the reputation guard's pause of its team or of itself (the
 * team's first), which refuses new sends from it.
 */
export type LookedUpDomain = SendingDomainRow & { paused?: SendingPause | null };

/** Looks up a sending domain by its team and name. */
export type DomainLookup = (teamId: string, name: string) => LookedUpDomain | undefined;

/** The sending domains these (team, name) pairs name, of any number of teams, in one query. */
export async function findSendingDomains(
  db: Kysely<SenderDb>,
  wanted: readonly { teamId: string; name: string }[],
): Promise<DomainLookup> {
  const key = (teamId: string, name: string) => `${teamId} ${name}`;
  // A batch names the same domain many times: ask for each pair once, not one joined row per email.
  const pairs = [...new Map(wanted.map((pair) => [key(pair.teamId, pair.name), pair])).values()];
  if (pairs.length === 0) return () => undefined;
  const { rows } = await sql<LookedUpDomain>`select ${PREPARED} d.*,
      (select json_build_object('scope', case when p.domain_id = ${TEAM_SCOPE}::uuid then 'team' else 'domain' end,
          'domain', p.domain_name, 'reason', p.reason, 'sends', p.sends, 'bounce_rate', p.bounce_rate,
          'complaint_rate', p.complaint_rate, 'line', p.line)
        from reputation_pauses p where p.team_id = d.team_id and p.domain_id in (${TEAM_SCOPE}::uuid, d.domain_id)
        order by p.domain_id limit 1) as paused
    from sending_domains d
    join unnest(${pairs.map((pair) => pair.teamId)}::uuid[], ${pairs.map((pair) => pair.name)}::text[]) as q (team_id, name)
      on d.team_id = q.team_id and d.name = q.name
    where not d.deleted`.execute(db);
  const domainsByKey = new Map(rows.map((row) => [key(row.team_id, row.name), row]));
  return (teamId, name) => domainsByKey.get(key(teamId, name));
}

/** A sending domain's row as a state message sets it. */
export type SendingDomainState = Omit<
  SendingDomainsTable,
  'deleted' | 'open_tracking' | 'click_tracking' | 'tracking_verified'
> & {
  deleted: boolean;
  open_tracking: boolean;
  click_tracking: boolean;
  tracking_verified: boolean;
};

/** Writes a domain's state that occurred at `state_at`, unless the row holds a newer one. */
export async function upsertSendingDomain(trx: Transaction<SenderDb>, row: SendingDomainState): Promise<void> {
  const { domain_id: _id, ...update } = row;
  await trx
    .insertInto('sending_domains')
    .values(row)
    .onConflict((oc) =>
      oc.column('domain_id').doUpdateSet(update).where(sql.ref('sending_domains.state_at'), '<=', row.state_at),
    )
    .execute();
}

/**
 * Whether `host` (a normalized host name) is the tracking host of a domain whose tracking records are
 * verified: `<tracking_subdomain>.<name>` of a row that is not a tombstone. Only the host's parent names can
 * be the domain's name, so the name index is asked for those few.
 */
export async function isVerifiedTrackingHost(db: Kysely<SenderDb>, host: string): Promise<boolean> {
  const labels = host.split('.');
  const parents = labels.slice(1, -1).map((_, i) => labels.slice(i + 1).join('.'));
  if (parents.length === 0) return false;
  const { rows } = await sql<{ found: number }>`select ${PREPARED} 1 as found from sending_domains
    where name = any(${parents}::text[]) and not deleted and tracking_verified
      and tracking_subdomain is not null and tracking_subdomain || '.' || name = ${host}
    limit 1`.execute(db);
  return rows.length > 0;
}
