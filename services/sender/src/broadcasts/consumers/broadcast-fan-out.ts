import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { fanOutBroadcastPage, type FanOutDeps } from '../use-cases/broadcast-fan-out.ts';

/**
 * `sender.fan-out-broadcast`: one page of a queued broadcast's contacts becomes emails, in the consumer's
 * transaction with the next page's command; a crash redelivers the command and the page is done again.
 */
export function createBroadcastFanOutConsumer(
  deps: FanOutDeps & { broker: Broker; db: Kysely<SenderDb>; logger: Logger },
): Consumer {
  return createConsumer<SenderDb, 'sender.fan-out-broadcast'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'fan-out-broadcast',
    bindings: [{ exchange: 'commands', routingKey: 'sender.fan-out-broadcast' }],
    logger: deps.logger,
    handle: async (message, trx) => {
      if (!message.team_id) return;
      const outcome = await fanOutBroadcastPage(
        trx,
        deps,
        message.team_id,
        message.data.broadcast_id,
        message.data.after,
      );
      if (typeof outcome === 'object') {
        deps.logger.warn(
          { broadcast_id: message.data.broadcast_id, reason: outcome.stopped },
          'broadcast canceled: it can no longer be sent',
        );
      }
    },
  });
}
