import { z } from 'zod';

/**
 * The `data` payloads of the 19 public events, exactly as webhook endpoints receive them (as in Resend's API reference:
 * the received-email fields and the webhook payloads). Wire field names are Resend's, camelCase included.
 */

/** Timestamps inside `data`: ISO 8601; an offset is allowed because Resend's own payloads carry `+00:00`. */
const Timestamp = z.iso.datetime({ offset: true });

const EmailData = z.object({
  email_id: z.uuid(),
  created_at: Timestamp,
  from: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  message_id: z.string().optional(),
  broadcast_id: z.uuid().optional(),
  template_id: z.uuid().optional(),
  /** An object map on the wire, never `[{name, value}]`. */
  tags: z.record(z.string(), z.string()).optional(),
  /** Present only when the sender set custom headers. */
  headers: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
});

export const EmailScheduled = EmailData;
export type EmailScheduled = z.infer<typeof EmailScheduled>;

export const EmailSent = EmailData;
export type EmailSent = z.infer<typeof EmailSent>;

export const EmailDelivered = EmailData;
export type EmailDelivered = z.infer<typeof EmailDelivered>;

export const EmailDeliveryDelayed = EmailData.extend({
  delivery_delayed: z
    .object({ message: z.string().optional(), diagnosticCode: z.array(z.string()).optional() })
    .optional(),
});
export type EmailDeliveryDelayed = z.infer<typeof EmailDeliveryDelayed>;

export const BounceType = z.enum(['Permanent', 'Transient', 'Undetermined']);
export type BounceType = z.infer<typeof BounceType>;

export const BounceSubType = z.enum([
  'General',
  'NoEmail',
  'MailboxFull',
  'MessageTooLarge',
  'ContentRejected',
  'AttachmentRejected',
  'Suppressed',
  'Undetermined',
]);
export type BounceSubType = z.infer<typeof BounceSubType>;

export const EmailBounced = EmailData.extend({
  bounce: z.object({
    message: z.string(),
    subType: BounceSubType,
    type: BounceType,
    diagnosticCode: z.array(z.string()),
  }),
});
export type EmailBounced = z.infer<typeof EmailBounced>;

export const EmailComplained = EmailData;
export type EmailComplained = z.infer<typeof EmailComplained>;

export const EmailOpened = EmailData.extend({
  /** True when a scanner or privacy proxy (not a person) loaded the pixel. Always present. */
  machine_open: z.boolean(),
});
export type EmailOpened = z.infer<typeof EmailOpened>;

export const EmailClicked = EmailData.extend({
  click: z.object({ ipAddress: z.string(), link: z.string(), timestamp: Timestamp, userAgent: z.string() }),
  /** Postline's: true when a security scanner (not a person) followed the link. Beyond the reference. */
  scanner_click: z.boolean().optional(),
});
export type EmailClicked = z.infer<typeof EmailClicked>;

export const EmailSuppressed = EmailData.extend({
  suppressed: z.object({
    message: z.string(),
    type: z.enum(['Suppressed', 'OnAccountSuppressionList']),
    reason: z.enum(['previous_bounce', 'previous_complaint']).optional(),
    diagnosticCode: z.array(z.string()).optional(),
  }),
});
export type EmailSuppressed = z.infer<typeof EmailSuppressed>;

export const EmailFailed = EmailData.extend({
  /** `reason` is a machine-readable word such as `reached_daily_quota`. */
  failed: z.object({ reason: z.string() }),
});
export type EmailFailed = z.infer<typeof EmailFailed>;

/** Metadata only: no body, headers or attachment content (fetch those with GET /emails/receiving/{id}). */
export const EmailReceived = z.object({
  email_id: z.uuid(),
  created_at: Timestamp,
  /** Bare address, no display name. */
  from: z.string(),
  to: z.array(z.string()),
  bcc: z.array(z.string()),
  cc: z.array(z.string()),
  received_for: z.array(z.string()),
  message_id: z.string(),
  subject: z.string(),
  attachments: z.array(
    z.object({
      id: z.uuid(),
      filename: z.string().nullable(),
      content_type: z.string(),
      content_disposition: z.string().nullable(),
      content_id: z.string().nullable(),
    }),
  ),
});
export type EmailReceived = z.infer<typeof EmailReceived>;

const ContactData = z.object({
  id: z.uuid(),
  /** Legacy audience (= segment) id. */
  audience_id: z.uuid().optional(),
  segment_ids: z.array(z.uuid()),
  created_at: Timestamp,
  updated_at: Timestamp,
  email: z.string(),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  unsubscribed: z.boolean(),
});

/**
 * Postline extension, present only when a signup form created the contact (once its signup was confirmed):
 * `{ type: "form", form_id }`. A contact created through the API or the dashboard has none.
 */
export const ContactSource = z.object({ type: z.literal('form'), form_id: z.uuid() });
export type ContactSource = z.infer<typeof ContactSource>;

export const ContactCreated = ContactData.extend({ source: ContactSource.optional() });
export type ContactCreated = z.infer<typeof ContactCreated>;

export const ContactUpdated = ContactData;
export type ContactUpdated = z.infer<typeof ContactUpdated>;

/** The last known record of the contact. */
export const ContactDeleted = ContactData;
export type ContactDeleted = z.infer<typeof ContactDeleted>;

export const DomainStatus = z.enum([
  'not_started',
  'pending',
  'verified',
  'partially_verified',
  'partially_failed',
  'failed',
  'temporary_failure',
]);
export type DomainStatus = z.infer<typeof DomainStatus>;

export const DomainRecordStatus = z.enum(['pending', 'verified', 'failed', 'temporary_failure', 'not_started']);
export type DomainRecordStatus = z.infer<typeof DomainRecordStatus>;

export const Capability = z.enum(['enabled', 'disabled']);
export type Capability = z.infer<typeof Capability>;

export const DomainCapabilities = z.object({ sending: Capability, receiving: Capability });
export type DomainCapabilities = z.infer<typeof DomainCapabilities>;

/** A DNS record as webhook payloads show it (the API calls the MX record `Receiving`, webhooks `Receiving MX`). */
export const DomainEventRecord = z.object({
  record: z.enum(['SPF', 'DKIM', 'Receiving MX', 'Tracking', 'TrackingCAA']),
  name: z.string(),
  type: z.enum(['MX', 'TXT', 'CNAME', 'CAA']),
  value: z.string(),
  /** A string on the wire, usually `Auto`. */
  ttl: z.string(),
  status: DomainRecordStatus,
  /** MX records only. */
  priority: z.number().int().optional(),
});
export type DomainEventRecord = z.infer<typeof DomainEventRecord>;

const DomainData = z.object({
  id: z.uuid(),
  name: z.string(),
  status: DomainStatus,
  created_at: Timestamp,
  region: z.string(),
  capabilities: DomainCapabilities,
  records: z.array(DomainEventRecord),
});

export const DomainCreated = DomainData;
export type DomainCreated = z.infer<typeof DomainCreated>;

export const DomainUpdated = DomainData;
export type DomainUpdated = z.infer<typeof DomainUpdated>;

export const DomainDeleted = DomainData;
export type DomainDeleted = z.infer<typeof DomainDeleted>;

export const SuppressionOrigin = z.enum(['bounce', 'complaint', 'manual']);
export type SuppressionOrigin = z.infer<typeof SuppressionOrigin>;

const SuppressionData = z.object({
  id: z.uuid(),
  email: z.string(),
  origin: SuppressionOrigin,
  /** What caused it (e.g. the bounced email's id); null when added by hand. */
  source_id: z.string().nullable(),
  created_at: Timestamp,
});

export const SuppressionAdded = SuppressionData;
export type SuppressionAdded = z.infer<typeof SuppressionAdded>;

export const SuppressionRemoved = SuppressionData;
export type SuppressionRemoved = z.infer<typeof SuppressionRemoved>;

/** The 19 public event names: email events, then contact, domain and suppression events. */
export const PublicEventType = z.enum([
  'email.scheduled',
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.suppressed',
  'email.failed',
  'email.received',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'suppression.added',
  'suppression.removed',
]);
export type PublicEventType = z.infer<typeof PublicEventType>;

export const PUBLIC_EVENT_TYPES: readonly PublicEventType[] = PublicEventType.options;

/** The data schema of each public event; the message catalog (catalog.ts) is built on it. */
export const publicEvents = {
  'email.scheduled': EmailScheduled,
  'email.sent': EmailSent,
  'email.delivered': EmailDelivered,
  'email.delivery_delayed': EmailDeliveryDelayed,
  'email.bounced': EmailBounced,
  'email.complained': EmailComplained,
  'email.opened': EmailOpened,
  'email.clicked': EmailClicked,
  'email.suppressed': EmailSuppressed,
  'email.failed': EmailFailed,
  'email.received': EmailReceived,
  'contact.created': ContactCreated,
  'contact.updated': ContactUpdated,
  'contact.deleted': ContactDeleted,
  'domain.created': DomainCreated,
  'domain.updated': DomainUpdated,
  'domain.deleted': DomainDeleted,
  'suppression.added': SuppressionAdded,
  'suppression.removed': SuppressionRemoved,
} as const satisfies Record<PublicEventType, z.ZodType>;

export type PublicEventData<K extends PublicEventType> = z.infer<(typeof publicEvents)[K]>;

const envelope = <K extends PublicEventType>(type: K) =>
  z.object({ type: z.literal(type), created_at: z.iso.datetime({ precision: 3 }), data: publicEvents[type] });

/** The body of every webhook delivery, `{ type, created_at, data }`: `created_at` is UTC with milliseconds. */
export const PublicEventEnvelope = z.discriminatedUnion('type', [
  envelope('email.scheduled'),
  envelope('email.sent'),
  envelope('email.delivered'),
  envelope('email.delivery_delayed'),
  envelope('email.bounced'),
  envelope('email.complained'),
  envelope('email.opened'),
  envelope('email.clicked'),
  envelope('email.suppressed'),
  envelope('email.failed'),
  envelope('email.received'),
  envelope('contact.created'),
  envelope('contact.updated'),
  envelope('contact.deleted'),
  envelope('domain.created'),
  envelope('domain.updated'),
  envelope('domain.deleted'),
  envelope('suppression.added'),
  envelope('suppression.removed'),
]);
export type PublicEventEnvelope = z.infer<typeof PublicEventEnvelope>;

/**
 * Builds the webhook body of one event. The data is not validated here: it was validated when published.
 *
 * @example
 * publicEventBody('email.delivered', new Date(), data) // { type: 'email.delivered', created_at: '2026-…Z', data }
 */
export function publicEventBody<K extends PublicEventType>(
  type: K,
  createdAt: Date,
  data: PublicEventData<K>,
): { type: K; created_at: string; data: PublicEventData<K> } {
  return { type, created_at: createdAt.toISOString(), data };
}
