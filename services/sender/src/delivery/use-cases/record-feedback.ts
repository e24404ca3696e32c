// Feedback that arrives after a recipient's server accepted an email (`internal.email.feedback` from the
// inbound MX).
import type { Transaction } from 'kysely';
import type { EmailFeedback } from '@postline/contracts';
import { enqueue } from '@postline/platform';
import { findEmail, setLastEvent, setRecipientFeedback, emailEvent, ONBOARDING_DOMAIN_ID } from '../../emails/index.ts';
import type { SenderDb } from '../../db/schema.ts';
import { isSandboxDomain } from '../../message/index.ts';
import { addSuppressions } from '../../suppressions/index.ts';
import { addReputationDeltas } from '../../reputation/index.ts';

/**
 * A complaint → `email.complained` and the address joins the suppression list (origin `complaint`, as SES
 * does for every complaint); a bounce report → `email.bounced`, and one whose status blames the address
 * itself (no such mailbox, not a policy or content refusal) suppresses it.
 * A report repeated (the same message redelivered, or the same report twice) does nothing the second time,
 * since it only applies to a recipient not already in that state.
 */
export async function recordFeedback(
  trx: Transaction<SenderDb>,
  teamId: string,
  feedback: EmailFeedback,
  now: () => Date,
): Promise<void> {
  const email = await findEmail(trx, teamId, feedback.email_id);
  if (!email) return;
  const next = feedback.kind === 'complaint' ? 'complained' : 'bounced';
  const named =
    feedback.recipient_position !== undefined
      ? { position: feedback.recipient_position }
      : feedback.recipient !== undefined
        ? { address: feedback.recipient }
        : undefined;
  if (!named) return;
  const recipient = await setRecipientFeedback(trx, email.id, named, {
    status: next,
    bounce_type: feedback.kind === 'bounce' ? (feedback.bounce?.type ?? 'Undetermined') : null,
    bounce_sub_type: feedback.kind === 'bounce' ? (feedback.bounce?.subType ?? 'Undetermined') : null,
    updated_at: now(),
  });
  if (!recipient) return;

  const bounce = feedback.bounce ?? {
    type: 'Undetermined' as const,
    subType: 'Undetermined' as const,
    message: "The recipient's mail system reported the email undeliverable without a usable status.",
    diagnosticCode: [],
  };
  await enqueue(trx, [
    feedback.kind === 'complaint'
      ? emailEvent('email.complained', email, [recipient.address], {})
      : emailEvent('email.bounced', email, [recipient.address], { bounce }),
  ]);
  await setLastEvent(trx, email.id, next);
  // A complaint, or a hard bounce reported after the recipient's server accepted the email, counts toward
  // the reputation guard's rates; its send was counted when it was delivered.
  if (!isSandboxDomain(recipient.domain) && email.domain_id !== ONBOARDING_DOMAIN_ID) {
    await addReputationDeltas(
      trx,
      [
        {
          teamId,
          domainId: email.domain_id,
          sends: 0,
          bounces: feedback.kind === 'bounce' && bounce.type === 'Permanent' ? 1 : 0,
          complaints: feedback.kind === 'complaint' ? 1 : 0,
        },
      ],
      now(),
    );
  }

  // A bounce suppresses when its status blames the address itself (the inbound MX's classification); a
  // report without that verdict, when it is permanent.
  const suppress =
    !isSandboxDomain(recipient.domain) &&
    (feedback.kind === 'complaint' || (feedback.suppress ?? bounce.type === 'Permanent'));
  if (suppress) {
    await addSuppressions(
      trx,
      teamId,
      [
        {
          email: recipient.address,
          origin: feedback.kind === 'complaint' ? 'complaint' : 'bounce',
          sourceId: email.id,
        },
      ],
      now(),
    );
  }
}
