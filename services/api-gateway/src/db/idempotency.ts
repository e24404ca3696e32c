import { sql, type Kysely } from 'kysely';
import { deleteInBatches, newId } from '@postline/platform';
import { IN_FLIGHT_STALE_SECONDS } from '../domain/idempotency.ts';
import type { GatewayDb, IdempotencyRecord } from './schema.ts';

export type Claim = { kind: 'claimed'; claimId: string } | { kind: 'existing'; record: IdempotencyRecord };

/**
 * Claims (team, key) for a new request, or returns the record already there. An expired record is taken
 * over as if new, and so is one left in flight for `staleSeconds` by a gateway that died mid-request (the
 * key is forwarded to the owner, which deduplicates on it, so the retry cannot send twice). The claim is a
 * single statement so two concurrent requests cannot both win.
 */
export async function claimIdempotencyKey(
  db: Kysely<GatewayDb>,
  input: { teamId: string; key: string; requestHash: string; ttlSeconds: number; staleSeconds?: number },
): Promise<Claim> {
  const staleSeconds = input.staleSeconds ?? IN_FLIGHT_STALE_SECONDS;
  const claimId = newId();
  const claimed = await sql<{ key: string }>`
    insert into idempotency_keys (team_id, key, request_hash, state, claim_id, expires_at)
    values (${input.teamId}, ${input.key}, ${input.requestHash}, 'in_flight', ${claimId}, now() + make_interval(secs => ${input.ttlSeconds}))
    on conflict (team_id, key) do update
      set request_hash = excluded.request_hash, state = 'in_flight', claim_id = excluded.claim_id, response_status = null,
          response_headers = null, response_body = null, created_at = now(), expires_at = excluded.expires_at
      where idempotency_keys.expires_at <= now()
         or (idempotency_keys.state = 'in_flight' and idempotency_keys.created_at < now() - make_interval(secs => ${staleSeconds}))
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

/** Forgets a claim whose request never reached its owner, so the client can retry with the same key. */
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

/** Deletes expired keys, a batch at a time; returns how many went. */
export async function pruneIdempotencyKeys(db: Kysely<GatewayDb>): Promise<number> {
  return deleteInBatches(db, 'idempotency_keys', sql`expires_at <= now()`);
}
