import { sql, type Kysely } from 'kysely';
import { deleteInBatches, newId } from '@postline/platform';
import { IDEMPOTENCY_LEASE_MS } from '../domain/idempotency.ts';
import type { GatewayDb, IdempotencyRecord } from './schema.ts';

export type Claim = { kind: 'claimed'; claimId: string } | { kind: 'existing'; record: IdempotencyRecord };

/**
 * Claims (team, key) for a new request, holding it in flight for `leaseMs` (renewed by renewIdempotencyLeases
 * while the request is in flight), or returns the record already there. An expired record is taken over as
 * if new, and so is one in flight whose lease ran out: its gateway died mid-request (the key is forwarded to
 * the owner, which deduplicates on it, so the retry cannot send twice). The claim is a single statement:
 * of two requests racing for a key, or for one whose lease ran out, only one wins.
 */
export async function claimIdempotencyKey(
  db: Kysely<GatewayDb>,
  input: { teamId: string; key: string; requestHash: string; ttlSeconds: number; leaseMs?: number },
): Promise<Claim> {
  const leaseSeconds = (input.leaseMs ?? IDEMPOTENCY_LEASE_MS) / 1000;
  const claimId = newId();
  const claimed = await sql<{ key: string }>`
    insert into idempotency_keys (team_id, key, request_hash, state, claim_id, expires_at, lease_expires_at)
    values (${input.teamId}, ${input.key}, ${input.requestHash}, 'in_flight', ${claimId}, now() + make_interval(secs => ${input.ttlSeconds}),
            now() + make_interval(secs => ${leaseSeconds}))
    on conflict (team_id, key) do update
      set request_hash = excluded.request_hash, state = 'in_flight', claim_id = excluded.claim_id, response_status = null,
          response_headers = null, response_body = null, created_at = now(), expires_at = excluded.expires_at,
          lease_expires_at = excluded.lease_expires_at
      where idempotency_keys.expires_at <= now()
         or (idempotency_keys.state = 'in_flight' and idempotency_keys.lease_expires_at <= now())
    returning key`.execute(db);
  if (claimed.rows.length > 0) return { kind: 'claimed', claimId };
  const record = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('team_id', '=', input.teamId)
    .where('key', '=', input.key)
    .executeTakeFirst();
  // Deleted in between (released after a failure): try once more as new.
  if (!record) return claimIdempotencyKey(db, input);
  return { kind: 'existing', record };
}

export async function completeIdempotencyKey(
  db: Kysely<GatewayDb>,
  input: {
    teamId: string;
    key: string;
    claimId: string;
    status: number;
    headers: Record<string, string>;
    body: Buffer;
  },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', response_status: input.status, response_headers: input.headers, response_body: input.body })
    .where('team_id', '=', input.teamId)
    .where('key', '=', input.key)
    .where('claim_id', '=', input.claimId)
    .execute();
}

/**
 * Forgets a claim whose forward failed (the owner could not be reached, cut the connection, did not answer in
 * time, or answered with a 5xx), so the client's retry with the same key is forwarded at once. The owner may
 * have acted on the first request: its own record of the key answers the retry with what it did.
 */
export async function releaseIdempotencyKey(
  db: Kysely<GatewayDb>,
  teamId: string,
  key: string,
  claimId: string,
): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('team_id', '=', teamId)
    .where('key', '=', key)
    .where('claim_id', '=', claimId)
    .where('state', '=', 'in_flight')
    .execute();
}

/** A claim a gateway holds while its request is in flight. */
export type HeldClaim = { teamId: string; key: string; claimId: string };

/**
 * Renews the leases of the claims this gateway holds (each its own claim id: a key taken over since is
 * another claim, never renewed by the gateway that lost it). One statement for all of them.
 */
export async function renewIdempotencyLeases(
  db: Kysely<GatewayDb>,
  claims: readonly HeldClaim[],
  leaseMs: number,
): Promise<void> {
  if (claims.length === 0) return;
  await sql`update idempotency_keys k set lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000})
    from unnest(${claims.map((c) => c.teamId)}::uuid[], ${claims.map((c) => c.key)}::text[], ${claims.map((c) => c.claimId)}::uuid[])
      as held (team_id, key, claim_id)
    where k.team_id = held.team_id and k.key = held.key and k.claim_id = held.claim_id and k.state = 'in_flight'`.execute(
    db,
  );
}

/** Deletes expired keys, a batch at a time; returns how many went. */
export async function pruneIdempotencyKeys(db: Kysely<GatewayDb>): Promise<number> {
  return deleteInBatches(db, 'idempotency_keys', sql`expires_at <= now()`);
}
