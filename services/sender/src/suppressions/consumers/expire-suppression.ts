import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { expireSuppression } from '../use-cases/suppressions.ts';

/** A temporary suppression's time is up: it leaves the list (suppression.removed) unless it became permanent. */
export function createExpireSuppressionConsumer(deps: {
  broker: Broker;
  db: Kysely<SenderDb>;
  logger: Logger;
  now: () => Date;
}): Consumer {
  return createConsumer<SenderDb, 'sender.expire-suppression'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'expire-suppression',
    bindings: [{ exchange: 'commands', routingKey: 'sender.expire-suppression' }],
    logger: deps.logger,
    handle: async (message, trx) => {
      if (message.team_id) await expireSuppression(trx, message.team_id, message.data.suppression_id, deps.now());
    },
  });
}
