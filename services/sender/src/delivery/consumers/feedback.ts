import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { recordFeedback } from '../use-cases/record-feedback.ts';

/** Complaints and bounce reports of accepted emails (`internal.email.feedback` from the inbound MX). */
export function createFeedbackConsumer(deps: {
  broker: Broker;
  db: Kysely<SenderDb>;
  logger: Logger;
  now: () => Date;
}): Consumer {
  return createConsumer<SenderDb, 'internal.email.feedback'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'feedback',
    bindings: [{ exchange: 'events', routingKey: 'internal.email.feedback' }],
    logger: deps.logger,
    handle: async (message, trx) => {
      if (message.team_id) await recordFeedback(trx, message.team_id, message.data, deps.now);
    },
  });
}
