import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import { insertNotices, teamAdmins } from '../db/notices.ts';
import type { GatewayDb } from '../db/schema.ts';
import { reputationPausedEmail, webhookDisabledEmail } from '../domain/admin-notices.ts';

export type AdminNoticeDeps = {
  db: Kysely<GatewayDb>;
  broker: Broker;
  logger: Logger;
  publicBaseUrl: string;
  /** Run once a message's notices have committed: sends them now rather than on the mailer's next tick. */
  noticesAdded: () => void;
};

/**
 * What a team's admins must hear of at once, from the services that saw it: `internal.webhook.disabled`
 * (the webhook-dispatcher disabled an endpoint after its failures) and `internal.reputation.paused` (the
 * sender's reputation guard paused sending). One notice email per admin of the team, written in the
 * consumer's transaction and sent by the notice mailer. A notice is keyed by message and person, so a
 * redelivered message adds none (no inbox needed); members are not told (the dashboard's banners show them).
 */
export function createAdminNoticeConsumer(deps: AdminNoticeDeps): Consumer {
  return createConsumer<GatewayDb, 'internal.webhook.disabled' | 'internal.reputation.paused'>({
    broker: deps.broker,
    db: deps.db,
    service: 'api-gateway',
    name: 'admin-notices',
    bindings: [
      { exchange: 'events', routingKey: 'internal.webhook.disabled' },
      { exchange: 'events', routingKey: 'internal.reputation.paused' },
    ],
    // A handful a day at most: one at a time keeps them in order (and their notices with them).
    prefetch: 1,
    logger: deps.logger,
    inbox: false,
    handle: async (message, trx) => {
      const found = message.team_id ? await teamAdmins(trx, message.team_id) : undefined;
      if (!found) return;
      await insertNotices(
        trx,
        found.admins.map((admin) => {
          const who = { team: found.team, name: admin.name, publicBaseUrl: deps.publicBaseUrl };
          return {
            message_id: message.id,
            user_id: admin.id,
            team_id: message.team_id!,
            to_address: admin.email,
            ...(message.type === 'internal.reputation.paused'
              ? reputationPausedEmail({ event: message.data, ...who })
              : webhookDisabledEmail({ event: message.data, ...who })),
          };
        }),
      );
      return deps.noticesAdded;
    },
  });
}
