// Delivery claims (migration 202612041000_delivery_claims): an SMTP transaction recorded before it starts.
import { sql, type Kysely } from 'kysely';
import type { SenderDb } from '../../db/schema.ts';

/** One delivery attempt: an email, the first recipient position of its command, the attempt number. */
export type DeliveryClaim = { emailId: string; firstPosition: number; attempt: number };

export type ClaimResult =
  /** This process holds the claim: make the attempt. `retaken`: from a process that stopped holding it. */
  | { kind: 'claimed'; retaken: boolean }
  /** Another process holds it and keeps it fresh: its outcome is coming. */
  | { kind: 'held' };

/**
 * Claims a delivery attempt for `instanceId`: a new claim, one this process holds already, or one not kept
 * fresh for `staleMs` (its process died, or gave the attempt up without recording it, so whether its
 * message went out is unknown). One statement; times are the database's, so replicas' clocks never matter.
 */
export async function claimDelivery(
  db: Kysely<SenderDb>,
  claim: DeliveryClaim,
  instanceId: string,
  staleMs: number,
): Promise<ClaimResult> {
  const { rows } = await sql<{ previous: string | null }>`with previous as (
      select instance_id from delivery_claims
      where email_id = ${claim.emailId} and first_position = ${claim.firstPosition} and attempt = ${claim.attempt}
    )
    insert into delivery_claims as c (email_id, first_position, attempt, instance_id, claimed_at)
    values (${claim.emailId}, ${claim.firstPosition}, ${claim.attempt}, ${instanceId}, now())
    on conflict (email_id, first_position, attempt) do update set instance_id = excluded.instance_id, claimed_at = excluded.claimed_at
      where c.instance_id = excluded.instance_id or c.claimed_at < now() - make_interval(secs => ${staleMs / 1000})
    returning (select instance_id from previous)::text as previous`.execute(db);
  const [row] = rows;
  if (!row) return { kind: 'held' };
  return { kind: 'claimed', retaken: row.previous !== null && row.previous !== instanceId };
}

/** Keeps this process's claims of attempts under way fresh. */
export async function refreshClaims(
  db: Kysely<SenderDb>,
  instanceId: string,
  claims: readonly DeliveryClaim[],
): Promise<void> {
  if (claims.length === 0) return;
  await sql`update delivery_claims c set claimed_at = now()
    from unnest(${claims.map((c) => c.emailId)}::uuid[], ${claims.map((c) => c.firstPosition)}::int[], ${claims.map((c) => c.attempt)}::int[])
      as k (email_id, first_position, attempt)
    where c.email_id = k.email_id and c.first_position = k.first_position and c.attempt = k.attempt
      and c.instance_id = ${instanceId}`.execute(db);
}

/** Forgets claims older than `keptMs`: their attempts are long recorded or given up. */
export async function pruneClaims(db: Kysely<SenderDb>, keptMs: number): Promise<void> {
  await sql`delete from delivery_claims where claimed_at < now() - make_interval(secs => ${keptMs / 1000})`.execute(db);
}
