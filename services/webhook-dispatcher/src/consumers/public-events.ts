import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { DispatcherDb } from '../db/schema.ts';
import type { FanOut } from '../use-cases/fan-out.ts';
import type { FirstAttempts } from '../use-cases/first-attempts.ts';

/** The four families of public events; every key under them is public (internal events use `internal.`). */
export const PUBLIC_EVENT_FAMILIES = ['email.*', 'contact.*', 'domain.*', 'suppression.*'] as const;

export type PublicEventsDeps = {
  db: Kysely<DispatcherDb>;
  broker: Broker;
  logger: Logger;
  fanOut: FanOut;
  firstAttempts: Pick<FirstAttempts, 'writeRecords' | 'discard'>;
};

/**
 * Public events, fanned out to the endpoints that subscribe to them. Messages are handled in batches: one
 * transaction and one multi-row insert of webhook event records for up to 128 of them.
 */
export function createPublicEventsConsumer(deps: PublicEventsDeps): Consumer {
  return createConsumer({
    broker: deps.broker,
    db: deps.db,
    service: 'webhook-dispatcher',
    name: 'public-events',
    bindings: PUBLIC_EVENT_FAMILIES.map((routingKey) => ({ exchange: 'events' as const, routingKey })),
    // A message is held from its first attempts until its batch commits (the POSTs, up to 25 ms of waiting,
    // the transaction), so the prefetch bounds the rate of a burst to one endpoint.
    prefetch: 512,
    logger: deps.logger,
    // Leaves most of the shutdown budget (SHUTDOWN_TIMEOUT_MS, 10 s) to the in-process attempts that follow;
    // what is still being prepared then is requeued and comes back marked redelivered.
    stopTimeoutMs: 4_000,
    prepare: (message, { redelivered }) => deps.fanOut(message, redelivered),
    discard: (records) => deps.firstAttempts.discard(records),
    // A redelivered event creates nothing: records are unique per (endpoint, source event).
    inbox: false,
    handle: (_message, trx, records) => deps.firstAttempts.writeRecords(trx, records),
    // Messages become ready one at a time, as their endpoints answer; a message waits up to 25 ms for
    // others (its deliveries are made already, only its record and ack wait), and batches hold far more.
    batch: {
      maxMessages: 128,
      maxWaitMs: 25,
      maxConcurrent: 2,
      handle: (items, trx) =>
        deps.firstAttempts.writeRecords(
          trx,
          items.flatMap((item) => item.prepared),
        ),
    },
  });
}
