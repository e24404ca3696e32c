import { z } from 'zod';
import { DomainCapabilities, DomainStatus } from './events.ts';

/**
 * Envelope of every broker message (ARCHITECTURE.md "Messaging"). `type` is the routing key;
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
});
export type DeliverWebhook = z.infer<typeof DeliverWebhook>;
