// A double opt-in's confirmation email, sent through the normal pipeline: written by the accept statement of
// POST /emails (email.sent and its delivery command in the same commit as the signup), DKIM-signed at
// delivery by the form's domain, and listed with the team's emails. It is sent from a verified domain of the
// team's, or, with the development inbox on, from the onboarding sender (whose messages stay in the install).
import type { Kysely, Transaction } from 'kysely';
import { checkSender, onboardingDomainOf, ONBOARDING_DOMAIN_ID, writeEmailNow } from '../../emails/index.ts';
import { escapeHtml } from '../../templates/index.ts';
import type { SenderDb, SendingDomainRow } from '../../db/schema.ts';
import { isOnboardingSender, isSandboxDomain, parseEmailRequest, type EmailRequest } from '../../message/index.ts';
import { findSendingDomains } from '../../sending-domains/index.ts';

export const DEFAULT_SUBJECT = 'Confirm your subscription';

export type ConfirmationMessage = { from: string; to: string; subject: string; formName: string; url: string };

/** The email's request, or why its sender or subject cannot be sent (a message for whoever set them). */
export function confirmationRequest(
  message: ConfirmationMessage,
  now: Date,
): { ok: true; request: EmailRequest } | { ok: false; message: string } {
  const name = message.formName;
  const parsed = parseEmailRequest(
    {
      from: message.from,
      to: [message.to],
      subject: message.subject,
      text: `Please confirm your subscription to ${name} by opening this link:\n\n${message.url}\n\nThe link works for 48 hours. If you did not sign up, ignore this email: nothing happens without your confirmation.\n`,
      html: confirmationHtml(name, message.url),
    },
    { now, batch: false },
  );
  return parsed.ok ? parsed : { ok: false, message: parsed.refusal.message };
}

/**
 * The domain a form's confirmations are sent from: the team's verified domain of the from address (with the
 * development inbox on, an added one), or the onboarding sender with the development inbox on; else why not.
 */
export async function confirmationDomain(
  db: Kysely<SenderDb> | Transaction<SenderDb>,
  teamId: string,
  request: EmailRequest,
  devInbox: boolean,
): Promise<{ ok: true; domain: SendingDomainRow } | { ok: false; message: string }> {
  const lookup = await findSendingDomains(db, [{ teamId, name: request.fromDomain }]);
  const own = lookup(teamId, request.fromDomain);
  if (!own && isSandboxDomain(request.fromDomain) && isOnboardingSender(request.from.address)) {
    if (!devInbox) {
      return {
        ok: false,
        message: `${request.from.address} sends a form's confirmations only with the development inbox on. Use an address on a verified domain of yours.`,
      };
    }
    const domain = onboardingDomainOf({
      domain_id: ONBOARDING_DOMAIN_ID,
      team_id: teamId,
      from_domain: request.fromDomain,
    });
    return domain ? { ok: true, domain } : { ok: false, message: 'The onboarding sender is not available.' };
  }
  const checked = checkSender(own, request, { members: [], devInbox });
  return checked.ok ? checked : { ok: false, message: checked.message };
}

/** Writes the confirmation email and its messages (email.sent, the delivery command) in the caller's transaction. */
export async function sendConfirmation(
  trx: Transaction<SenderDb>,
  request: EmailRequest,
  domain: SendingDomainRow,
  now: Date,
): Promise<string> {
  return writeEmailNow(trx, { ...request, tags: [{ name: 'category', value: 'signup_confirmation' }] }, domain, now);
}

function confirmationHtml(name: string, url: string): string {
  return `<!doctype html>
<html lang="en"><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1a1a1a">
<p>Please confirm your subscription to <strong>${escapeHtml(name)}</strong>.</p>
<p><a href="${escapeHtml(url)}" style="display:inline-block;padding:.5rem 1.25rem;background:#1a1a1a;color:#fff;text-decoration:none;border-radius:4px">Confirm my subscription</a></p>
<p>The link works for 48 hours. If you did not sign up, ignore this email: nothing happens without your confirmation.</p>
</body></html>`;
}
