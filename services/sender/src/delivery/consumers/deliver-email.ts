import { createConsumer, type Broker, type Consumer } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import {
  attemptDelivery,
  recordAttempts,
  releaseAttemptClaims,
  type DeliverDeps,
  type DeliveryAttempt,
} from '../use-cases/deliver-emails.ts';

/**
 * The consumer of `sender.deliver`: each command is one SMTP transaction, made in `prepare` (outside any
 * transaction) and recorded in the handler's transaction. A redelivery after a crash between the two sends
 * the message again (the duplicate RFC 1047 accepts for an MTA); the result is recorded once.
 */
export function createDeliverEmailConsumer(
  deps: DeliverDeps & { broker: Broker; concurrency: number; recordRetriesMs?: readonly number[] },
): Consumer {
  return createConsumer<SenderDb, 'sender.deliver', DeliveryAttempt>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    // Names the queue (`<prefix>.sender.deliver`): part of the broker topology, so it stays as it is.
    name: 'deliver',
    bindings: [{ exchange: 'commands', routingKey: 'sender.deliver' }],
    prefetch: deps.concurrency,
    logger: deps.logger,
    prepare: (message) => attemptDelivery(deps, message),
    // An attempt's claim is given up once its record has committed, or when no record will be made.
    handle: async (_message, trx, attempt) => {
      await recordAttempts(deps, trx, [attempt]);
      return () => releaseAttemptClaims(deps, [attempt]);
    },
    discard: (attempt) => releaseAttemptClaims(deps, [attempt]),
    // Results of attempts that finish within 50 ms of each other are recorded in one transaction, with one
    // statement for their recipients and one for their events; a failed batch records each attempt on its
    // own, and never makes an attempt again. SMTP sessions finish one at a time, so without the wait a
    // batch would hold only the few results that finished together. The message went out already: the
    // wait delays only its record and its events.
    batch: {
      maxMessages: 64,
      maxWaitMs: 50,
      maxConcurrent: 2,
      handle: async (items, trx) => {
        const attempts = items.map((item) => item.prepared);
        await recordAttempts(deps, trx, attempts);
        return () => releaseAttemptClaims(deps, attempts);
      },
    },
    // An attempt whose record fails (Postgres down) is recorded again for about six minutes before its
    // message goes to a retry tier, where the attempt would be made again: a message that got its 250 is
    // not sent a second time because of an outage shorter than that.
    recordRetriesMs: deps.recordRetriesMs ?? [250, 1000, 5000, 15_000, 30_000, 60_000, 60_000, 60_000, 60_000, 60_000],
  });
}
