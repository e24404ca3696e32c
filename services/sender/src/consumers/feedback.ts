import type { Kysely } from 'kysely';
import { createConsumer, enqueue, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../db/schema.ts';
import { SANDBOX_DOMAIN } from '../domain/sandbox.ts';
import { emailEvent } from '../events.ts';
import { addSuppressions } from '../suppress.ts';

/**
 * Feedback that arrives after a recipient's server accepted an email (`internal.email.feedback` from the
 * inbound MX): a complaint → `email.complained` and the address joins the suppression list (origin
 * `complaint`, as SES does for every complaint); a bounce report → `email.bounced`, and a permanent one
 * suppresses the address. A report repeated (the same message redelivered, or the same report twice) does
 * nothing the second time, since it only applies to a recipient not already in that state.
 */
export function createFeedbackConsumer(deps: { broker: Broker; db: Kysely<SenderDb>; logger: Logger; now: () => Date }): Consumer {
  return createConsumer<SenderDb, 'internal.email.feedback'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'feedback',
    bindings: [{ exchange: 'events', routingKey: 'internal.email.feedback' }],
    logger: deps.logger,
    handle: async (message, trx) => {
      const { team_id: teamId, data } = message;
      if (!teamId) return;
      const email = await trx.selectFrom('emails').selectAll().where('team_id', '=', teamId).where('id', '=', data.email_id).executeTakeFirst();
      if (!email) return;
      const next = data.kind === 'complaint' ? 'complained' : 'bounced';
      const recipient = await trx
        .updateTable('recipients')
        .set({
          status: next,
          bounce_type: data.kind === 'bounce' ? (data.bounce?.type ?? 'Undetermined') : null,
          bounce_sub_type: data.kind === 'bounce' ? (data.bounce?.subType ?? 'Undetermined') : null,
          updated_at: deps.now(),
        })
        .where('email_id', '=', email.id)
        .where((eb) => eb(eb.fn('lower', ['address']), '=', data.recipient.toLowerCase()))
        .where('status', '!=', next)
        .returning(['address', 'domain'])
        .executeTakeFirst();
      if (!recipient) return;

      const bounce = data.bounce ?? {
        type: 'Undetermined' as const,
        subType: 'Undetermined' as const,
        message: 'The recipient\'s mail system reported the email undeliverable without a usable status.',
        diagnosticCode: [],
      };
      await enqueue(trx, [
        data.kind === 'complaint'
          ? emailEvent('email.complained', email, [recipient.address], {})
          : emailEvent('email.bounced', email, [recipient.address], { bounce }),
      ]);
      await trx.updateTable('emails').set({ last_event: next }).where('id', '=', email.id).execute();

      const suppress = recipient.domain !== SANDBOX_DOMAIN && (data.kind === 'complaint' || bounce.type === 'Permanent');
      if (suppress) {
        await addSuppressions(
          trx,
          teamId,
          [{ email: recipient.address, origin: data.kind === 'complaint' ? 'complaint' : 'bounce', sourceId: email.id }],
          deps.now(),
        );
      }
    },
  });
}
