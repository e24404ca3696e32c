import { createIntervalJob, type IntervalJob, type Logger } from '@postline/platform';
import type { Kysely } from 'kysely';
import { pruneAcceptedRequests } from '../db/accepted-requests.ts';
import type { SenderDb } from '../../db/schema.ts';

/** Deletes the idempotency keys past their lifetime, once a minute. */
export function createIdempotencyPrune(deps: { db: Kysely<SenderDb>; now: () => Date; logger: Logger }): IntervalJob {
  return createIntervalJob({
    name: 'idempotency-prune',
    everyMs: 60_000,
    run: () => pruneAcceptedRequests(deps.db, deps.now()),
    logger: deps.logger,
  });
}
