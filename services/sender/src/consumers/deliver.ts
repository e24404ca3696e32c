import { createConsumer, type Broker, type Consumer } from '@postline/platform';
import { attemptDelivery, recordAttempts, type Attempt, type DeliverDeps } from '../deliver.ts';
import type { SenderDb } from '../db/schema.ts';

/**
 * The delivery workers: each `sender.deliver` command is one SMTP transaction, made in `prepare` (outside
 * any transaction) and recorded in the handler's transaction. A redelivery after a crash between the two
 * sends the message again (the duplicate RFC 1047 accepts for an MTA); the outcome is recorded once.
 */
export function createDeliverConsumer(deps: DeliverDeps & { broker: Broker; concurrency: number; recordRetriesMs?: readonly number[] }): Consumer {
  return createConsumer<SenderDb, 'sender.deliver', Attempt>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'deliver',
    bindings: [{ exchange: 'commands', routingKey: 'sender.deliver' }],
    prefetch: deps.concurrency,
    logger: deps.logger,
    prepare: (message) => attemptDelivery(deps, message),
    handle: (_message, trx, attempt) => recordAttempts(deps, trx, [attempt]),
    // Outcomes of attempts that finish within 50 ms of each other are recorded in one transaction with one
    // statement for their recipients and one for their events; a failed batch records each attempt on its
    // own, and never makes an attempt again. SMTP sessions finish one at a time, so without the wait a batch
    // held 4 or 5 outcomes under load; with it, up to 64 (and the sender spends far less on round trips).
    // The message went out already: the wait delays only its record and its events.
    batch: { maxMessages: 64, maxWaitMs: 50, maxConcurrent: 2, handle: (items, trx) => recordAttempts(deps, trx, items.map((i) => i.prepared)) },
    // An attempt whose record fails (Postgres down) is recorded again for about six minutes before its
    // message goes to a retry tier, where the attempt would be made again: a message that got its 250 is
    // not sent a second time because of an outage shorter than that.
    recordRetriesMs: deps.recordRetriesMs ?? [250, 1000, 5000, 15_000, 30_000, 60_000, 60_000, 60_000, 60_000, 60_000],
  });
}
