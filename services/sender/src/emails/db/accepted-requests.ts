// The idempotency keys of accepted requests: the response each key answered with, for a day
// (IDEMPOTENCY_KEY_LIFETIME_MS, as at the gateway).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { IDEMPOTENCY_KEY_LIFETIME_MS } from '@postline/contracts';
import { deleteInBatches } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';

/** A team's idempotency key, with the gateway's hash of the request when it sent one. */
export type IdempotencyKey = { teamId: string; key: string; requestHash?: string };

/**
 * The statement that claims `idempotencyKey` for a request answering `response`, to run as the first CTE of
 * the accept statement (insertAcceptedEmails): it returns a row when the key is new to the team or older
 * than its lifetime (then taken anew), and none while the team holds it. Two requests racing on one key
 * are ordered by the key's unique index. Without a key, it always returns a row.
 */
export function claimIdempotencyKey(
  idempotencyKey: IdempotencyKey | undefined,
  response: unknown,
  now: Date,
): RawBuilder<unknown> {
  return idempotencyKey === undefined
    ? sql`select 1 as ok`
    : sql`insert into accepted_requests (team_id, idempotency_key, request_hash, response, created_at)
            values (${idempotencyKey.teamId}::uuid, ${idempotencyKey.key}, ${idempotencyKey.requestHash ?? null}::text, ${JSON.stringify(response)}::jsonb, ${now})
            on conflict (team_id, idempotency_key) do update set request_hash = excluded.request_hash,
              response = excluded.response, created_at = excluded.created_at
            where accepted_requests.created_at <= ${new Date(now.getTime() - IDEMPOTENCY_KEY_LIFETIME_MS)}
            returning 1 as ok`;
}

/** What the team's key answered with, and the hash of the request it answered. */
export async function findAcceptedRequest(
  db: Kysely<SenderDb>,
  idempotencyKey: IdempotencyKey,
): Promise<{ response: unknown; request_hash: string | null } | undefined> {
  return db
    .selectFrom('accepted_requests')
    .select(['response', 'request_hash'])
    .where('team_id', '=', idempotencyKey.teamId)
    .where('idempotency_key', '=', idempotencyKey.key)
    .executeTakeFirst();
}

/**
 * Deletes the keys past their lifetime, `batch` at a time (each its own statement) until none is left or
 * `maxBatches` ran; returns how many went. The sender runs it once a minute.
 */
export async function pruneAcceptedRequests(
  db: Kysely<SenderDb>,
  now: Date,
  opts: { batch?: number; maxBatches?: number } = {},
): Promise<number> {
  return deleteInBatches(
    db,
    'accepted_requests',
    sql`created_at <= ${new Date(now.getTime() - IDEMPOTENCY_KEY_LIFETIME_MS)}`,
    opts,
  );
}
