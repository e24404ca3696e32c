import { z } from 'zod';
import { BounceSubType, BounceType, DomainCapabilities, DomainStatus } from './events.ts';

/**
 * Envelope of every broker message (docs/configuration.md, "Names on the wire"). `type` is the routing key;
 * `data` is validated against the catalog separately (see `parseMessage`).
 */
export const MessageEnvelope = z.object({
  id: z.uuid(),
  type: z.string().min(1),
  version: z.number().int().min(1),
  occurred_at: z.iso.datetime({ offset: true }),
  /** null for messages that belong to no team. */
  team_id: z.uuid().nullable(),
  data: z.unknown(),
});
export type MessageEnvelope = z.infer<typeof MessageEnvelope>;

/** Command `scheduler.set-timer`: publish `message` under `routing_key` at `due_at`. `key` names the timer. */
export const TimerSet = z.object({
  key: z.string().min(1).max(200),
  due_at: z.iso.datetime({ offset: true }),
  routing_key: z.string().min(1),
  message: MessageEnvelope,
});
export type TimerSet = z.infer<typeof TimerSet>;

/** Command `scheduler.cancel-timer`. */
export const TimerCancel = z.object({ key: z.string().min(1).max(200) });
export type TimerCancel = z.infer<typeof TimerCancel>;

/**
 * Internal event `internal.domain.state`: the whole current state of one domain, published on every change
 * so that sender and inbound-smtp keep read models. Carries secrets: never delivered to customers.
 */
export const DomainState = z.object({
  domain_id: z.uuid(),
  team_id: z.uuid(),
  name: z.string(),
  status: DomainStatus,
  capabilities: DomainCapabilities,
  dkim_selector: z.string(),
  /** Encrypted with POSTLINE_SECRET_KEY; only the sender decrypts it. */
  dkim_private_key_encrypted: z.string(),
  /** Full return-path (bounce) host, e.g. `send.example.com`. */
  return_path: z.string(),
  /** All records of the sending capability verified: mail from this domain may be sent. */
  sending_verified: z.boolean(),
  /** The receiving MX record verified: mail to this domain is accepted. */
  receiving_verified: z.boolean(),
  /** `enforced`: deliver only over TLS; `opportunistic`: STARTTLS when offered. */
  tls: z.enum(['opportunistic', 'enforced']),
  open_tracking: z.boolean(),
  click_tracking: z.boolean(),
  /** The tracking subdomain's label(s) (`links` for `links.<name>`), or null for none. Optional: older states lack it. */
  tracking_subdomain: z.string().nullable().optional(),
  /**
   * The tracking subdomain's records verified (its CNAME points at TRACKING_HOST and CAA lets our CA issue
   * its certificate): only then are open_tracking and click_tracking applied. Optional: older states lack it
   * (read as false).
   */
  tracking_verified: z.boolean().optional(),
  /** True once the domain is removed; read models drop it. */
  deleted: z.boolean(),
});
export type DomainState = z.infer<typeof DomainState>;

/**
 * Command `domain-verifier.check-domain`: look the domain's records up now (sent by the scheduler when a
 * domain's check timer fires).
 */
export const CheckDomain = z.object({ domain_id: z.uuid() });
export type CheckDomain = z.infer<typeof CheckDomain>;

/**
 * Command `webhook-dispatcher.deliver`: make one delivery attempt of a webhook event record. `attempt` is
 * the scheduled attempt's number (1–8): a command for an attempt already made is ignored. A replay has no
 * number and never changes the schedule.
 */
export const DeliverWebhook = z.object({
  event_id: z.string().regex(/^msg_[0-9a-f]{32}$/),
  attempt: z.number().int().min(1).max(8).nullable(),
  replay: z.boolean(),
  /**
   * A replay of a bulk recovery (POST /webhooks/{id}/events/replay): skipped once the event is no longer failed,
   * so a recovery asked twice, or an event another replay delivered meanwhile, is not sent again.
   */
  only_if_failed: z.boolean().optional(),
});
export type DeliverWebhook = z.infer<typeof DeliverWebhook>;

/**
 * Command `sender.deliver`: make one delivery attempt of an email to the recipients it has at one domain
 * (one SMTP transaction). `attempt` counts from 1; a command for an attempt already made is ignored, so a
 * redelivered or late command never sends twice on purpose.
 */
export const DeliverEmail = z.object({
  email_id: z.uuid(),
  /** Recipient domain, lower-case. */
  domain: z.string().min(1).max(253),
  /** Indexes into the email's recipients, at most 50. */
  recipients: z.array(z.number().int().min(0)).min(1).max(50),
  attempt: z.number().int().min(1),
  /**
   * How many of the attempts before this one our own traffic shaping deferred (the provider held, or its
   * rate used up) without a connection: the retry back-off does not count them. Absent: none.
   */
  throttled: z.number().int().min(0).optional(),
});
export type DeliverEmail = z.infer<typeof DeliverEmail>;

/**
 * Command `sender.send-scheduled`: a scheduled email's time has come (sent by the scheduler). `scheduled_at`
 * is the time the timer was set for: a command for a time the email no longer has (rescheduled) is ignored.
 */
export const SendScheduledEmail = z.object({ email_id: z.uuid(), scheduled_at: z.iso.datetime({ offset: true }) });
export type SendScheduledEmail = z.infer<typeof SendScheduledEmail>;

/** Command `sender.expire-suppression`: a temporary suppression's time is up (sent by the scheduler). */
export const ExpireSuppression = z.object({ suppression_id: z.uuid() });
export type ExpireSuppression = z.infer<typeof ExpireSuppression>;

/**
 * Command `sender.import-contacts`: process (or resume) a contact import, its CSV stored with it. Sent when
 * the import is created, and again by a run that hands the rest of the file over (a shutdown, its time up).
 */
export const ImportContacts = z.object({ import_id: z.uuid() });
export type ImportContacts = z.infer<typeof ImportContacts>;

/**
 * Command `sender.send-broadcast`: a scheduled broadcast's time has come (sent by the scheduler). A command
 * for a time the broadcast no longer has (canceled, rescheduled) is ignored.
 */
export const SendBroadcast = z.object({ broadcast_id: z.uuid(), scheduled_at: z.iso.datetime({ offset: true }) });
export type SendBroadcast = z.infer<typeof SendBroadcast>;

/**
 * Command `sender.fan-out-broadcast`: make the emails of the next page of a queued broadcast's contacts, those
 * after contact id `after` (null: from the first). Each page's transaction sends the next page's command; a
 * command whose `after` is not where the broadcast's fan-out stands is stale and ignored.
 */
export const FanOutBroadcast = z.object({ broadcast_id: z.uuid(), after: z.uuid().nullable() });
export type FanOutBroadcast = z.infer<typeof FanOutBroadcast>;

/**
 * Internal event `internal.email.feedback`: what a recipient's system reported about an email after
 * accepting it, matched to the email and recipient by the VERP address (inbound-smtp publishes it for
 * DSNs and ARF complaints it has authenticated; the sender consumes it). Never delivered to customers.
 */
export const EmailFeedback = z
  .object({
    email_id: z.uuid(),
    /**
     * The recipient the report is about: its address as the report names it, and/or its position in the email
     * when the VERP address named one (a report that cannot be parsed still names its recipient that way). The
     * position wins when both are given. At least one is present.
     */
    recipient: z.string().min(3).max(320).optional(),
    recipient_position: z.number().int().nonnegative().optional(),
    kind: z.enum(['bounce', 'complaint']),
    /** For bounces: the classification of the DSN's status. */
    bounce: z
      .object({ type: BounceType, subType: BounceSubType, message: z.string(), diagnosticCode: z.array(z.string()) })
      .optional(),
    /**
     * For bounces: whether the report's status says the address itself is at fault (no such mailbox, disabled),
     * so that it joins the suppression list, as a refusal at our own delivery would; false for a failure about
     * the message or our sending (a policy refusal, 5.1.7/5.1.8, content). Absent: a Permanent bounce does.
     */
    suppress: z.boolean().optional(),
    /** For complaints: the ARF Feedback-Type (`abuse`, `fraud`, ...). */
    feedback_type: z.string().max(64).optional(),
  })
  .refine((f) => f.recipient !== undefined || f.recipient_position !== undefined, {
    message: 'recipient or recipient_position is required',
  });
export type EmailFeedback = z.infer<typeof EmailFeedback>;

/**
 * Internal event `internal.contact.unsubscribe-mail`: a broadcast recipient mailed the `mailto:` of an
 * email's List-Unsubscribe (RFC 2369), received by the inbound MX at the return-path domain. `token` is the
 * unsubscribe link token from the subject (`unsubscribe <token>`); the sender checks it as it checks the
 * one-click link's, and a token that does not verify changes nothing.
 */
export const UnsubscribeMail = z.object({
  token: z.string().min(1).max(512),
  /** The envelope sender of the request mail, for the log only. */
  from: z.string().max(320),
});
export type UnsubscribeMail = z.infer<typeof UnsubscribeMail>;

/**
 * Internal event `internal.webhook.disabled`: the webhook-dispatcher disabled an endpoint of the envelope's
 * team because every delivery to it failed for the disable window (5 days). The api-gateway, which knows
 * the team's people, emails each admin of the team once (when the operator configured a system sender).
 */
export const WebhookDisabled = z.object({
  webhook_id: z.uuid(),
  endpoint: z.string().max(2048),
  reason: z.string().max(500),
  /** The first failure of the run of failures that disabled it: a bulk replay since then recovers it all. */
  failing_since: z.iso.datetime({ offset: true }),
  disabled_at: z.iso.datetime({ offset: true }),
});
export type WebhookDisabled = z.infer<typeof WebhookDisabled>;

/** What the reputation guard watches: a team's sending as a whole, or one of its sending domains. */
export const ReputationScope = z.enum(['team', 'domain']);
export type ReputationScope = z.infer<typeof ReputationScope>;

/**
 * Internal event `internal.reputation.paused` (team_id in the envelope): the sender's reputation guard paused
 * a team's sending, or one sending domain's, because a rolling rate over its last sends crossed its line.
 * New sends are refused (403 `sending_paused`) and queued mail waits until an admin resumes. For a notifier
 * that tells the team's admins; never delivered to customers' webhooks.
 */
export const ReputationPaused = z.object({
  scope: ReputationScope,
  /** The sending domain paused (scope `domain`); null for the team. */
  domain_id: z.uuid().nullable(),
  domain: z.string().nullable(),
  reason: z.enum(['bounce_rate', 'complaint_rate']),
  /** What the window held when the guard paused: its sends, and the rates as fractions (0.05 = 5%). */
  sends: z.number().int().nonnegative(),
  bounce_rate: z.number().min(0),
  complaint_rate: z.number().min(0),
  /** The lines in force (fractions) and the window (sends) with its minimum volume. */
  thresholds: z.object({
    bounce_rate: z.number(),
    complaint_rate: z.number(),
    window: z.number().int(),
    min_sends: z.number().int(),
  }),
  paused_at: z.iso.datetime({ offset: true }),
});
export type ReputationPaused = z.infer<typeof ReputationPaused>;

/** Internal event `internal.reputation.resumed`: an admin resumed a paused team or sending domain. */
export const ReputationResumed = z.object({
  scope: ReputationScope,
  domain_id: z.uuid().nullable(),
  domain: z.string().nullable(),
  /** The dashboard user who resumed; null for an API key. */
  resumed_by: z.uuid().nullable(),
  resumed_at: z.iso.datetime({ offset: true }),
});
export type ReputationResumed = z.infer<typeof ReputationResumed>;
