import { IDEMPOTENCY_HEADER, PERMISSION_HEADER, TEAM_HEADER, type Logger } from '@postline/platform';

export type DashboardMessage = {
  to: string;
  subject: string;
  text: string;
  /** The same key sends once however often it is asked (the sender keeps its idempotency keys for 24 hours). */
  idempotencyKey?: string;
};

/** Sends one of the dashboard's own emails; false when it could not be handed to the sender. */
export type DashboardMail = (message: DashboardMessage) => Promise<boolean>;

/**
 * The dashboard's emails (invites, password resets) sent through Postline itself: a POST /emails to the sender
 * as the operator's team (DASHBOARD_MAIL_TEAM_ID), from DASHBOARD_MAIL_FROM, an address on a domain that team has
 * verified. Undefined when the operator configured none: the links are then shown to the admin to copy. A refusal
 * or no answer within 10 s is logged and reported as false, and the caller shows the link instead.
 */
export function createDashboardMail(opts: {
  senderUrl: string;
  from: string | undefined;
  teamId: string | undefined;
  logger: Logger;
}): DashboardMail | undefined {
  const { from, teamId } = opts;
  if (!from !== !teamId) throw new Error('Set both DASHBOARD_MAIL_FROM and DASHBOARD_MAIL_TEAM_ID, or neither.');
  if (!from || !teamId) return undefined;
  return async (message) => {
    try {
      const response = await fetch(new URL('/emails', opts.senderUrl), {
        method: 'POST',
        headers: {
          [TEAM_HEADER]: teamId,
          [PERMISSION_HEADER]: 'full_access',
          ...(message.idempotencyKey ? { [IDEMPOTENCY_HEADER]: message.idempotencyKey } : {}),
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({ from, to: [message.to], subject: message.subject, text: message.text }),
        signal: AbortSignal.timeout(10_000),
      });
      const answer = await response.text();
      if (response.ok) return true;
      opts.logger.warn(
        { status: response.status, answer: answer.slice(0, 500) },
        'dashboard email refused by the sender',
      );
    } catch (err) {
      opts.logger.warn({ err }, 'dashboard email not sent: the sender did not answer');
    }
    return false;
  };
}
