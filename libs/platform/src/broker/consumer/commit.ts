import type { Channel, ConsumeMessage } from 'amqplib';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Message } from '@postline/contracts';
import { isDatabaseUnavailable, PREPARED } from '../../db/db.ts';
import type { Logger } from '../../logger/logger.ts';
import type { BrokerMetrics } from '../metrics.ts';
import type { Settle } from './channel.ts';
import type { FailureRouting } from './failure-routing.ts';
import type { Share, SharedPrepares } from './shared-prepare.ts';
import type { Outcome } from './types.ts';

/** A decoded and prepared delivery, waiting for its transaction. */
export type Ready<Prepared> = {
  ch: Channel;
  msg: ConsumeMessage;
  message: Message;
  prepared: Prepared;
  attempt: number;
  settled: (outcome: Outcome) => void;
  /** The prepare this copy holds, shared with the other copies of its message in flight here. */
  share: Share<Prepared>;
};

type AfterCommit = void | (() => void);

export type Commits<Prepared> = {
  /**
   * One message in its own transaction: inbox row, handler, commit, ack, after-commit work. A failed
   * transaction is tried again after each of `recordRetriesMs` (unless the consumer is stopping).
   */
  commitOne(
    ch: Channel,
    msg: ConsumeMessage,
    message: Message,
    share: Share<Prepared>,
    attempt: number,
  ): Promise<Outcome>;
  /**
   * A batch in one transaction: one multi-row inbox insert tells the new messages from redeliveries, the
   * handler sees only the new ones, and every message is acked after the commit. If the transaction
   * fails, each message is handled again on its own, so the failure lands only on the message causing it.
   */
  commitBatch(items: Ready<Prepared>[]): Promise<void>;
};

/** The transactions that record handled messages: the inbox, the handler, the commit, then the ack. */
export function createCommits<DB, Prepared>(opts: {
  db: Kysely<DB>;
  consumerId: string;
  useInbox: boolean;
  handle: (message: Message, trx: Transaction<DB>, prepared: Prepared) => Promise<AfterCommit>;
  batchHandle:
    | ((items: { message: Message; prepared: Prepared }[], trx: Transaction<DB>) => Promise<AfterCommit>)
    | undefined;
  recordRetriesMs: readonly number[] | undefined;
  isStopping: () => boolean;
  log: Logger;
  metrics: BrokerMetrics | undefined;
  settle: Settle;
  shares: SharedPrepares<Prepared>;
  failures: FailureRouting;
}): Commits<Prepared> {
  const { db, consumerId, useInbox, log, metrics, settle, shares, failures } = opts;

  /**
   * The ids (lower-case) not handled before, recording them in `inbox` in the caller's transaction; every
   * id when the consumer keeps no inbox.
   */
  async function claimNew(trx: Transaction<DB>, messageIds: readonly string[]): Promise<Set<string>> {
    const ids = [...new Set(messageIds.map((id) => id.toLowerCase()))];
    if (!useInbox) return new Set(ids);
    const { rows } = await sql<{ message_id: string }>`insert ${PREPARED} into inbox (consumer, message_id)
      select ${consumerId}, unnest(${ids}::uuid[]) on conflict do nothing returning message_id`.execute(trx);
    return new Set(rows.map((r) => r.message_id.toLowerCase()));
  }

  async function commitOne(
    ch: Channel,
    msg: ConsumeMessage,
    message: Message,
    share: Share<Prepared>,
    attempt: number,
    retry = 0,
  ): Promise<Outcome> {
    const prepared = share.prepared as Prepared;
    try {
      const after: { run?: AfterCommit } = {};
      const fresh = await db.transaction().execute(async (trx) => {
        // Already processed and committed: a redelivery or a duplicate publish. Do nothing, just ack.
        if ((await claimNew(trx, [message.id])).size === 0) return false;
        after.run = await opts.handle(message, trx, prepared);
        return true;
      });
      settle(ch, msg, 'ack');
      shares.settleCopy(share, fresh);
      runAfter(after.run, message.id);
      return fresh ? 'ok' : 'duplicate';
    } catch (err) {
      if (await recordAgain(err, retry, 1)) return commitOne(ch, msg, message, share, attempt, retry + 1);
      shares.settleCopy(share, false);
      return failures.fail(ch, msg, message, attempt, err);
    }
  }

  /**
   * Whether a failed record of prepared results is to be tried again (`recordRetriesMs`, the database
   * unavailable, the consumer not stopping), after waiting the retry's delay.
   */
  async function recordAgain(err: unknown, retry: number, messages: number): Promise<boolean> {
    const delayMs = opts.recordRetriesMs?.[retry];
    if (delayMs === undefined || opts.isStopping() || !isDatabaseUnavailable(err)) return false;
    log.warn({ err, messages, retry: retry + 1 }, 'recording prepared results failed; trying again');
    metrics?.recordRetries.inc({ consumer: consumerId }, messages);
    // In steps, so that a consumer told to stop does not wait out a long delay first.
    for (let waited = 0; waited < delayMs && !opts.isStopping(); waited += 250)
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, delayMs - waited)));
    return !opts.isStopping();
  }

  async function commitBatch(items: Ready<Prepared>[], retry = 0): Promise<void> {
    const fresh = new Set<Ready<Prepared>>();
    const after: { run?: AfterCommit } = {};
    try {
      await db.transaction().execute(async (trx) => {
        const newIds = await claimNew(
          trx,
          items.map((i) => i.message.id),
        );
        for (const item of items) {
          const id = item.message.id.toLowerCase();
          // The first copy of a new id is handled; later copies in the same batch are duplicates.
          if (newIds.delete(id)) fresh.add(item);
        }
        const handled = [...fresh].map((i) => ({ message: i.message, prepared: i.prepared }));
        if (handled.length === 0) return;
        if (opts.batchHandle) {
          after.run = await opts.batchHandle(handled, trx);
        } else {
          const runs: Array<() => void> = [];
          for (const h of handled) {
            const run = await opts.handle(h.message, trx, h.prepared);
            if (run) runs.push(run);
          }
          if (runs.length > 0) after.run = () => runs.forEach((run) => runAfter(run));
        }
      });
    } catch (err) {
      // The database is down: the batch is recorded again as a whole, so that its messages do not each
      // wait out retries of their own.
      if (await recordAgain(err, retry, items.length)) return commitBatch(items, retry + 1);
      if (items.length === 1) {
        const [item] = items as [Ready<Prepared>];
        shares.settleCopy(item.share, false);
        item.settled(await failures.fail(item.ch, item.msg, item.message, item.attempt, err));
        return;
      }
      log.info({ err, messages: items.length }, 'batch transaction failed; handling its messages one by one');
      metrics?.batchFallbacks.inc({ consumer: consumerId });
      // A batch that used up its record retries with the database down gives its messages none of their own;
      // otherwise each gets its own, all at once, so that no message waits out the others' retries unacked.
      const spent = isDatabaseUnavailable(err) ? retry : 0;
      await Promise.all(
        items.map(async (item) =>
          item.settled(await commitOne(item.ch, item.msg, item.message, item.share, item.attempt, spent)),
        ),
      );
      return;
    }
    metrics?.batchSize.observe({ consumer: consumerId }, items.length);
    for (const item of items) {
      settle(item.ch, item.msg, 'ack');
      shares.settleCopy(item.share, fresh.has(item));
      item.settled(fresh.has(item) ? 'ok' : 'duplicate');
    }
    runAfter(after.run);
  }

  function runAfter(run: AfterCommit, messageId?: string): void {
    if (!run) return;
    try {
      run();
    } catch (err) {
      log.error({ err, message_id: messageId }, 'after-commit work failed');
    }
  }

  return { commitOne, commitBatch };
}
