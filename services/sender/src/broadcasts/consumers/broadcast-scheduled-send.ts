import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { sendScheduledBroadcast } from '../use-cases/broadcasts.ts';

/** A scheduled broadcast's timer fired (`sender.send-broadcast`): it goes now unless canceled or moved. */
export function createBroadcastScheduledSendConsumer(deps: {
  broker: Broker;
  db: Kysely<SenderDb>;
  logger: Logger;
}): Consumer {
  return createConsumer<SenderDb, 'sender.send-broadcast'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'send-broadcast',
    bindings: [{ exchange: 'commands', routingKey: 'sender.send-broadcast' }],
    logger: deps.logger,
    handle: async (message, trx) => {
      if (message.team_id) {
        await sendScheduledBroadcast(trx, message.team_id, message.data.broadcast_id, message.data.scheduled_at);
      }
    },
  });
}
