import type { Kysely } from 'kysely';
import { createIntervalJob, type IntervalJob, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { pruneKeptMessages } from '../db/messages.ts';

const BATCH = 1000;

/** Deletes the kept messages older than `retentionDays`, every 10 minutes, a batch at a time. */
export function createDevInboxPrune(deps: {
  db: Kysely<SenderDb>;
  now: () => Date;
  logger: Logger;
  retentionDays: number;
}): IntervalJob {
  return createIntervalJob({
    name: 'dev-inbox-prune',
    everyMs: 10 * 60_000,
    run: async () => {
      const before = new Date(deps.now().getTime() - deps.retentionDays * 86_400_000);
      while ((await pruneKeptMessages(deps.db, before, BATCH)) === BATCH);
    },
    logger: deps.logger,
  });
}
