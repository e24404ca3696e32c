import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import type { UnsubscribeSigner } from '../domain/unsubscribe-links.ts';
import { unsubscribeByMail } from '../use-cases/unsubscribe.ts';

/** List-Unsubscribe mails to a return-path domain (`internal.contact.unsubscribe-mail` from the inbound MX). */
export function createUnsubscribeMailConsumer(deps: {
  broker: Broker;
  db: Kysely<SenderDb>;
  logger: Logger;
  now: () => Date;
  unsubscribeLinks: UnsubscribeSigner;
}): Consumer {
  return createConsumer<SenderDb, 'internal.contact.unsubscribe-mail'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'unsubscribe-mail',
    bindings: [{ exchange: 'events', routingKey: 'internal.contact.unsubscribe-mail' }],
    logger: deps.logger,
    handle: async (message, trx) => {
      if (message.team_id) await unsubscribeByMail(trx, deps, message.team_id, message.data);
    },
  });
}
