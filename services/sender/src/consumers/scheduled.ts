import { createConsumer, enqueue, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { Kysely } from 'kysely';
import { lockEmail, pendingRecipients, sendMessages } from '../accept.ts';
import type { SenderDb } from '../db/schema.ts';
import { expireSuppression } from '../suppress.ts';

/**
 * A scheduled email's timer fired: it is sent now (email.sent and its delivery commands) unless it was
 * canceled, already sent, or rescheduled to another time (that time's timer sends it).
 */
export function createSendScheduledConsumer(deps: { broker: Broker; db: Kysely<SenderDb>; logger: Logger }): Consumer {
  return createConsumer<SenderDb, 'sender.send-scheduled'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'send-scheduled',
    bindings: [{ exchange: 'commands', routingKey: 'sender.send-scheduled' }],
    logger: deps.logger,
    handle: async (message, trx) => {
      if (!message.team_id) return;
      const email = await lockEmail(trx, message.team_id, message.data.email_id);
      if (!email || email.status !== 'scheduled') return;
      if (email.scheduled_at?.getTime() !== new Date(message.data.scheduled_at).getTime()) return;
      const updated = await trx
        .updateTable('emails')
        .set({ status: 'queued', last_event: 'sent' })
        .where('id', '=', email.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await enqueue(trx, sendMessages(updated, await pendingRecipients(trx, email.id)));
    },
  });
}

/** A temporary suppression's time is up: it leaves the list (suppression.removed) unless it became permanent. */
export function createExpireSuppressionConsumer(deps: { broker: Broker; db: Kysely<SenderDb>; logger: Logger; now: () => Date }): Consumer {
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
