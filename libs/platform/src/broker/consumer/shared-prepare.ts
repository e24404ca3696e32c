import type { Message } from '@postline/contracts';
import type { Logger } from '../../logger/logger.ts';
import type { BrokerMetrics } from '../metrics.ts';
import type { Delivery } from './types.ts';

/**
 * One prepare and the copies of its message holding it. Its result is discarded once the last copy has
 * settled, unless one of them was handled: a result a committed handler recorded is never discarded.
 */
export type Share<Prepared> = {
  result: Promise<Prepared>;
  prepared?: Prepared;
  copies: number;
  handled: boolean;
  key?: string;
};

export type SharedPrepares<Prepared> = {
  /**
   * The prepare of `message`, shared with a copy of it already in flight here, or started now; resolves
   * once its result is in `share.prepared`. Rejects (and shares nothing) when the prepare fails.
   */
  take(message: Message, delivery: Delivery): Promise<Share<Prepared>>;
  /**
   * One copy of a message is done with its prepared result (`handled`: a handler's transaction recording it
   * committed). The result is discarded once every copy holding it is done and none was handled.
   */
  settleCopy(share: Share<Prepared>, handled: boolean): void;
};

/**
 * The prepares of this process not settled yet, by message id (lower-case). A second copy of a message
 * whose first copy is still being prepared or recorded here (the broker redelivered it after a lost
 * channel, or an outbox published it again after a lost commit) waits for that prepare and shares its
 * result instead of repeating its effect (an SMTP transaction, a webhook POST): the inbox then records
 * one of the two and acks both. Held from the prepare's start until the last copy holding it settles, or
 * at once if the prepare fails (a later copy prepares afresh). Only with an inbox: a consumer without one
 * would record both copies, so its own records must tell them apart instead.
 */
export function createSharedPrepares<Prepared>(opts: {
  prepare: ((message: Message, delivery: Delivery) => Promise<Prepared>) | undefined;
  discard: ((prepared: Prepared) => void) | undefined;
  useInbox: boolean;
  consumerId: string;
  metrics: BrokerMetrics | undefined;
  log: Logger;
}): SharedPrepares<Prepared> {
  const { prepare, useInbox, consumerId, metrics, log } = opts;
  const preparing = new Map<string, Share<Prepared>>();

  /** Stops offering a prepare to later copies (it settled, or failed). */
  function forget(share: Share<Prepared>): void {
    if (share.key !== undefined && preparing.get(share.key) === share) preparing.delete(share.key);
  }

  return {
    async take(message, delivery) {
      let share: Share<Prepared>;
      const key = message.id.toLowerCase();
      const running = useInbox ? preparing.get(key) : undefined;
      if (running) {
        running.copies++;
        share = running;
        metrics?.sharedPrepares.inc({ consumer: consumerId });
        log.info(
          { message_id: message.id, type: message.type },
          'a copy of a message in flight here; sharing its prepare',
        );
      } else {
        const result = (prepare ? prepare(message, delivery) : Promise.resolve(undefined)) as Promise<Prepared>;
        const created: Share<Prepared> = { result, copies: 1, handled: false };
        share = created;
        if (useInbox && prepare) {
          created.key = key;
          preparing.set(key, created);
          result.catch(() => forget(created));
        }
      }
      share.prepared = await share.result;
      return share;
    },
    settleCopy(share, handled) {
      share.copies--;
      if (handled) share.handled = true;
      if (share.copies > 0) return;
      forget(share);
      if (share.handled) return;
      try {
        opts.discard?.(share.prepared as Prepared);
      } catch (err) {
        log.error({ err }, 'discarding a prepared result failed');
      }
    },
  };
}
