import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { sendScheduledEmail } from '../use-cases/schedule-emails.ts';

/** A scheduled email's timer fired (`sender.send-scheduled`): it is sent now unless it was canceled or moved. */
export function createSendScheduledConsumer(deps: { broker: Broker; db: Kysely<SenderDb>; logger: Logger }): Consumer {
  return createConsumer<SenderDb, 'sender.send-scheduled'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'send-scheduled',
    bindings: [{ exchange: 'commands', routingKey: 'sender.send-scheduled' }],
    logger: deps.logger,
    handle: async (message, trx) => {
      if (message.team_id)
        await sendScheduledEmail(trx, message.team_id, message.data.email_id, message.data.scheduled_at);
    },
  });
}
