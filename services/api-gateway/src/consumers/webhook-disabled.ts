import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import { insertNotices, teamAdmins } from '../db/notices.ts';
import type { GatewayDb } from '../db/schema.ts';
import { webhookDisabledEmail } from '../domain/webhook-notice.ts';

export type WebhookDisabledDeps = {
  db: Kysely<GatewayDb>;
  broker: Broker;
  logger: Logger;
  publicBaseUrl: string;
  /** Run once a message's notices have committed: sends them now rather than on the mailer's next tick. */
  noticesAdded: () => void;
};

/**
 * `internal.webhook.disabled` from the webhook-dispatcher: one notice email per admin of the team, written in
 * the consumer's transaction and sent by the notice mailer. A notice is keyed by message and person, so a
 * redelivered message adds none (no inbox needed); members are not told (the dashboard's banner shows them).
 */
export function createWebhookDisabledConsumer(deps: WebhookDisabledDeps): Consumer {
  return createConsumer<GatewayDb, 'internal.webhook.disabled'>({
    broker: deps.broker,
    db: deps.db,
    service: 'api-gateway',
    name: 'webhook-disabled',
    bindings: [{ exchange: 'events', routingKey: 'internal.webhook.disabled' }],
    // A handful a day at most: one at a time keeps them in order (and their notices with them).
    prefetch: 1,
    logger: deps.logger,
    inbox: false,
    handle: async (message, trx) => {
      const found = message.team_id ? await teamAdmins(trx, message.team_id) : undefined;
      if (!found) return;
      await insertNotices(
        trx,
        found.admins.map((admin) => ({
          message_id: message.id,
          user_id: admin.id,
          team_id: message.team_id!,
          to_address: admin.email,
          ...webhookDisabledEmail({
            event: message.data,
            team: found.team,
            name: admin.name,
            publicBaseUrl: deps.publicBaseUrl,
          }),
        })),
      );
      return deps.noticesAdded;
    },
  });
}
