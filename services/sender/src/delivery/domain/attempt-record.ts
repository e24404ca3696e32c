// What recording one delivery attempt changes: each recipient's new state, and what follows from the
// recipients the record reached (their events, the positions to retry, the bounces that may suppress an
// address). Values only: the use case writes them.
import type { BounceSubType, BounceType, EmailBounced, EmailSent, PublicEventData } from '@postline/contracts';
import { expiredDeferralSubType, type BounceClass } from '@postline/platform/pure';
import type { RecipientResult } from './recipient-result.ts';
import { isSandboxDomain } from '../../message/index.ts';

/** The fields of a recipient (a `recipients` row) that recording an attempt reads. */
export type AttemptRecipient = { position: number; address: string; domain: string; first_deferred_at: Date | null };

/** A recipient's state once this attempt's result is recorded. */
export type RecipientTransition = {
  recipient: AttemptRecipient;
  result: RecipientResult;
  status: 'delivered' | 'deferred' | 'bounced' | 'failed' | 'suppressed' | 'complained';
  bounceType: BounceType | null;
  bounceSubType: BounceSubType | null;
  firstDeferredAt: Date | null;
};

/** Each recipient's new state after this attempt's result; a deferral past the delivery lifetime ends. */
export function planRecipientStates(
  recipients: readonly AttemptRecipient[],
  results: readonly RecipientResult[],
  now: Date,
  lifetimeMs: number,
): RecipientTransition[] {
  return recipients.map((recipient, i) => {
    const result = results[i] as RecipientResult;
    let status: RecipientTransition['status'];
    let bounceType: RecipientTransition['bounceType'] = null;
    let bounceSubType: RecipientTransition['bounceSubType'] = null;
    let firstDeferredAt = recipient.first_deferred_at;
    switch (result.kind) {
      case 'delivered':
      case 'complained':
      case 'suppressed':
      case 'failed':
        status = result.kind;
        break;
      case 'bounced':
        status = 'bounced';
        bounceType = result.bounce.type;
        bounceSubType = result.bounce.subType;
        break;
      case 'deferred': {
        const since = recipient.first_deferred_at ?? now;
        if (now.getTime() - since.getTime() >= lifetimeMs) {
          // Out of time: a server kept answering 4xx → a transient bounce; nobody answered → failed.
          status = result.fromServer ? 'bounced' : 'failed';
          if (result.fromServer) {
            bounceType = 'Transient';
            bounceSubType = expiredDeferralSubType(result.response);
          }
        } else {
          status = 'deferred';
          firstDeferredAt = since;
        }
        break;
      }
    }
    return { recipient, result, status, bounceType, bounceSubType, firstDeferredAt };
  });
}

type AttemptEventType =
  | 'email.delivered'
  | 'email.complained'
  | 'email.delivery_delayed'
  | 'email.bounced'
  | 'email.suppressed'
  | 'email.failed';

/** An email event an attempt causes, without the email's own fields: `to` names the recipients it is about. */
export type AttemptEvent = {
  [K in AttemptEventType]: { type: K; to: string[]; extra: Omit<PublicEventData<K>, keyof EmailSent> };
}[AttemptEventType];

/**
 * A bounced recipient: the event's `bounce`, whether the address joins the suppression list, and whether
 * the bounce counts towards a temporary suppression (aboutTheMailbox).
 */
export type BouncedRecipient = {
  address: string;
  bounce: EmailBounced['bounce'];
  suppress: boolean;
  transient: boolean;
};

export type AttemptEffects = {
  /** In the order they are enqueued. */
  events: AttemptEvent[];
  /** The email's `last_event` once they are: that of the last one. */
  lastEvent: 'delivered' | 'complained' | 'delivery_delayed' | 'bounced' | 'suppressed' | 'failed' | undefined;
  /** Positions deferred within the delivery lifetime, retried together by one timer. */
  retry: number[];
  bounced: BouncedRecipient[];
};

/**
 * What the recorded part of one attempt causes. `recorded` tells whether a recipient's new state was
 * written (it was still at this attempt); it is asked once per recipient, in order.
 */
export function attemptEffects(
  transitions: readonly RecipientTransition[],
  recorded: (recipient: AttemptRecipient) => boolean,
): AttemptEffects {
  const delivered: string[] = [];
  const complained: string[] = [];
  const delayed: { address: string; result: RecipientResult & { kind: 'deferred' } }[] = [];
  const retry: number[] = [];
  const bounced: BouncedRecipient[] = [];
  const suppressed: { address: string; reason: 'previous_bounce' | 'previous_complaint' | undefined }[] = [];
  const failed: { address: string; reason: string }[] = [];
  for (const { recipient, result, status, bounceSubType } of transitions) {
    if (!recorded(recipient)) continue;

    switch (result.kind) {
      case 'delivered':
        delivered.push(recipient.address);
        break;
      case 'complained':
        delivered.push(recipient.address);
        complained.push(recipient.address);
        break;
      case 'suppressed':
        suppressed.push({ address: recipient.address, reason: result.reason });
        break;
      case 'failed':
        failed.push({ address: recipient.address, reason: result.reason });
        break;
      case 'bounced':
        bounced.push({
          address: recipient.address,
          bounce: bounceOf(result.bounce, result.code, result.response),
          suppress: result.bounce.suppress && !isSandboxDomain(recipient.domain),
          transient: aboutTheMailbox(result.bounce),
        });
        break;
      case 'deferred':
        if (status === 'deferred') {
          retry.push(recipient.position);
          if (recipient.first_deferred_at === null) delayed.push({ address: recipient.address, result });
        } else if (status === 'bounced') {
          bounced.push({
            address: recipient.address,
            bounce: {
              type: 'Transient',
              subType: bounceSubType ?? 'General',
              message: "The recipient's mail server kept refusing the email temporarily until we stopped retrying.",
              diagnosticCode: [diagnostic(result.code, result.response)],
            },
            suppress: false,
            transient: aboutTheMailbox({ type: 'Transient', subType: bounceSubType ?? 'General' }),
          });
        } else {
          failed.push({ address: recipient.address, reason: 'delivery_timeout' });
        }
        break;
    }
  }

  const events: AttemptEvent[] = [];
  let lastEvent: AttemptEffects['lastEvent'];
  if (delivered.length > 0) {
    events.push({ type: 'email.delivered', to: delivered, extra: {} });
    lastEvent = 'delivered';
  }
  if (complained.length > 0) {
    events.push({ type: 'email.complained', to: complained, extra: {} });
    lastEvent = 'complained';
  }
  if (delayed.length > 0) {
    const first = (delayed[0] as (typeof delayed)[number]).result;
    events.push({
      type: 'email.delivery_delayed',
      to: delayed.map((d) => d.address),
      extra: {
        delivery_delayed: {
          message: first.throttle
            ? `Deliveries to the recipient's mailbox provider (${first.throttle.provider}) are throttled after it asked us to slow down; we will retry after ${first.throttle.until.toISOString()}.`
            : "The recipient's mail server did not accept the email yet; we will retry.",
          diagnosticCode: [diagnostic(first.code, first.response)],
        },
      },
    });
    lastEvent = 'delivery_delayed';
  }
  for (const bounce of bounced) {
    events.push({ type: 'email.bounced', to: [bounce.address], extra: { bounce: bounce.bounce } });
    lastEvent = 'bounced';
  }
  for (const reason of new Set(suppressed.map((s) => s.reason))) {
    events.push({
      type: 'email.suppressed',
      to: suppressed.filter((s) => s.reason === reason).map((s) => s.address),
      extra: {
        suppressed: {
          message:
            reason === undefined
              ? 'The recipient is on your suppression list, so the email was not sent to it.'
              : 'The recipient is on your suppression list because of an earlier bounce or complaint, so the email was not sent to it.',
          type: 'OnAccountSuppressionList',
          ...(reason === undefined ? {} : { reason }),
        },
      },
    });
    lastEvent = 'suppressed';
  }
  for (const reason of new Set(failed.map((f) => f.reason))) {
    events.push({
      type: 'email.failed',
      to: failed.filter((f) => f.reason === reason).map((f) => f.address),
      extra: { failed: { reason } },
    });
    lastEvent = 'failed';
  }
  return { events, lastEvent, retry, bounced };
}

function bounceOf(bounce: BounceClass, code: number, response: string): EmailBounced['bounce'] {
  return {
    type: bounce.type,
    subType: bounce.subType,
    message:
      bounce.type === 'Permanent'
        ? "The recipient's mail server permanently rejected the email."
        : bounce.type === 'Transient'
          ? "The recipient's mail server rejected the email for a reason that may not last."
          : "The recipient's mail server rejected the email for an undetermined reason.",
    diagnosticCode: [diagnostic(code, response)],
  };
}

/**
 * A `diagnosticCode` entry as in a DSN (RFC 3464): `smtp; 550 5.1.1 ...`. A server's reply (and one we make
 * up) already starts with its code; a sandbox reply does not.
 */
export function diagnostic(code: number, response: string): string {
  return /^\d{3}(?:[ -]|$)/.test(response) ? `smtp; ${response}` : `smtp; ${code} ${response}`;
}

/**
 * The transient bounces that say something about the mailbox (a server refusing it for now, or full), and so
 * count towards a temporary suppression; a refusal of the message or of our sending (ContentRejected,
 * AttachmentRejected, MessageTooLarge: a block list, a spam filter, a size limit) does not.
 */
export const MAILBOX_BOUNCE_SUB_TYPES: readonly BounceSubType[] = ['General', 'MailboxFull'];

function aboutTheMailbox(bounce: { type: BounceType; subType: BounceSubType }): boolean {
  return bounce.type === 'Transient' && MAILBOX_BOUNCE_SUB_TYPES.includes(bounce.subType);
}
