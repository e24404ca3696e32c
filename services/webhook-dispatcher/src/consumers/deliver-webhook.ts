import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { DispatcherDb } from '../db/schema.ts';
import type { AttemptDelivery, AttemptOutcome } from '../use-cases/attempt-delivery.ts';
import type { RecordingDeps } from '../use-cases/attempt-records.ts';
import { recordCommandOutcomes } from '../use-cases/record-command-outcomes.ts';

export type DeliverWebhookDeps = {
  db: Kysely<DispatcherDb>;
  broker: Broker;
  logger: Logger;
  delivery: Pick<AttemptDelivery, 'attemptCommand'>;
  recording: RecordingDeps;
  /** Commands in flight at once: the process's overall limit on deliveries in flight. */
  prefetch: number;
};

/**
 * `webhook-dispatcher.deliver` commands: retries, replays, busy waits and swept first attempts. The POST
 * runs before the transaction (`prepare`); its outcome is recorded in the consumer's transaction, in
 * batches of up to 32 commands.
 */
export function createDeliverWebhookConsumer(deps: DeliverWebhookDeps): Consumer {
  return createConsumer<DispatcherDb, 'webhook-dispatcher.deliver', AttemptOutcome>({
    broker: deps.broker,
    db: deps.db,
    service: 'webhook-dispatcher',
    name: 'deliver',
    bindings: [{ exchange: 'commands', routingKey: 'webhook-dispatcher.deliver' }],
    prefetch: deps.prefetch,
    logger: deps.logger,
    prepare: (message) => deps.delivery.attemptCommand(message.data),
    handle: async (message, trx, outcome) => {
      if (!message.team_id) return;
      return recordCommandOutcomes(deps.recording, trx, [{ command: message.data, teamId: message.team_id, outcome }]);
    },
    batch: {
      maxMessages: 32,
      maxWaitMs: 5,
      handle: (items, trx) =>
        recordCommandOutcomes(
          deps.recording,
          trx,
          items.flatMap(({ message, prepared }) =>
            message.team_id ? [{ command: message.data, teamId: message.team_id, outcome: prepared }] : [],
          ),
        ),
    },
  });
}
