import type { ColumnType, Generated, Selectable } from 'kysely';
import type {
  BounceSubType,
  BounceType,
  DomainStatus,
  PropertyType,
  Subscription,
  SuppressionOrigin,
  TemplateVariable,
} from '@postline/contracts';
import type { MessagingTables } from '@postline/platform';

type CreatedAt = ColumnType<Date, Date | undefined, never>;
type Json<T> = ColumnType<T, string, string>;

/** Read model of one domain, kept from `internal.domain.state`. */
export type SendingDomainsTable = {
  domain_id: string;
  team_id: string;
  name: string;
  status: DomainStatus;
  sending_verified: boolean;
  dkim_selector: string;
  /** Sealed with POSTLINE_SECRET_KEY; opened only to sign. */
  dkim_private_key_encrypted: string;
  /** e.g. `send.example.com`: the VERP addresses' domain. */
  return_path: string;
  tls: 'opportunistic' | 'enforced';
  /** Open and click tracking as asked for; applied only when tracking_verified. */
  open_tracking: Generated<boolean>;
  click_tracking: Generated<boolean>;
  /** The tracking host's label(s) (`links` for `links.<name>`), or null for none. */
  tracking_subdomain: string | null;
  /** The tracking host's records verified (its CNAME to TRACKING_HOST, CAA for our CA). */
  tracking_verified: Generated<boolean>;
  /** occurred_at of the state applied: an older state arriving late is ignored. */
  state_at: Date;
  /** A tombstone: the domain was deleted (and is not verified); kept so that no older state revives it. */
  deleted: Generated<boolean>;
};

export type EmailStatus = 'scheduled' | 'queued' | 'canceled';

export type LastEvent =
  | 'queued'
  | 'scheduled'
  | 'canceled'
  | 'sent'
  | 'delivered'
  | 'delivery_delayed'
  | 'bounced'
  | 'failed'
  | 'suppressed'
  | 'complained'
  | 'opened'
  | 'clicked';

export type Header = { name: string; value: string };
export type Tag = { name: string; value: string };

export type EmailsTable = {
  id: string;
  team_id: string;
  domain_id: string;
  /** `from` as sent (`Acme <o@example.com>`). */
  from_header: string;
  from_address: string;
  from_domain: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  /** null: generate from html; '': no text part. */
  text: string | null;
  headers: Json<Header[]>;
  tags: Json<Tag[]>;
  /** `<id@domain>` */
  message_id: string;
  status: EmailStatus;
  last_event: LastEvent;
  scheduled_at: Date | null;
  created_at: CreatedAt;
  /** The broadcast that made the email (its events' `broadcast_id`). */
  broadcast_id: string | null;
  /** The template the email was sent with (its events' `template_id`). */
  template_id: string | null;
  /** The topic the email was sent under (`topic_id` of GET /emails/{id}). */
  topic_id: string | null;
  /** The API key that sent it, and the gateway's log of the request (GET /logs/{id}); null for a broadcast's. */
  api_key_id: ColumnType<string | null, string | null | undefined, string | null>;
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
};

export type EmailAttachmentsTable = {
  /** UUIDv7; null on rows from before ids were kept, until assignAttachmentIds gives them a random one. */
  id: ColumnType<string | null, string | undefined, string>;
  email_id: string;
  position: number;
  filename: string | null;
  content_type: string | null;
  content_id: string | null;
  content: Buffer;
};

/**
 * The MIME of a raw email (POST /emails with message/rfc822), as it is delivered before DKIM signing. Its
 * email row has `raw = true` (a column kept out of EmailsTable: every EmailRow written elsewhere is a
 * composed one and leaves it to its default; read it with isRawEmail).
 */
export type RawEmailsTable = {
  email_id: string;
  mime: Buffer;
};

export type RecipientStatus =
  | 'pending'
  | 'deferred'
  | 'delivered'
  | 'bounced'
  | 'failed'
  | 'suppressed'
  | 'complained'
  | 'canceled';

export type RecipientsTable = {
  email_id: string;
  position: number;
  team_id: string;
  /** Bare address, domain part lower-case. */
  address: string;
  domain: string;
  status: RecipientStatus;
  attempts: Generated<number>;
  first_deferred_at: Date | null;
  last_code: number | null;
  last_response: string | null;
  bounce_type: BounceType | null;
  bounce_sub_type: BounceSubType | null;
  updated_at: Generated<Date>;
  /** The mailbox provider of the MX an attempt reached (delivery/domain/providers.ts); null until one did. */
  provider: ColumnType<string | null, never, string | null>;
  /** Generated: status is pending or deferred (the predicate of the index /metrics counts through). */
  waiting: ColumnType<boolean, never, never>;
};

export type AcceptedRequestsTable = {
  team_id: string;
  idempotency_key: string;
  /** The gateway's hash of the request the key was used for; null on rows from before it was kept. */
  request_hash: string | null;
  response: Json<unknown>;
  created_at: Generated<Date>;
};

export type SuppressionsTable = {
  id: string;
  team_id: string;
  /** Lower-case. */
  email: string;
  origin: SuppressionOrigin;
  source_id: string | null;
  /** null: until removed by hand. */
  expires_at: Date | null;
  created_at: CreatedAt;
};

/** Only the sender's own tables; another service's tables cannot be typed here. */
/** A team's contact property: values must have its type; `fallback_value` stands in where a contact has none. */
export type ContactPropertiesTable = {
  id: string;
  team_id: string;
  /** `[A-Za-z0-9_]{1,50}`, case-sensitive, unique per team. */
  key: string;
  type: PropertyType;
  fallback_value: Json<string | number | null> | null;
  created_at: CreatedAt;
};

/** One per email per team (case-insensitive through `email_key`). */
export type ContactsTable = {
  id: string;
  team_id: string;
  email: string;
  email_key: Generated<string>;
  first_name: string | null;
  last_name: string | null;
  /** Opted out of every broadcast. */
  unsubscribed: Generated<boolean>;
  /** Property values by the property's id (not its key), so that a deleted property's values are never read. */
  properties: ColumnType<Record<string, string | number | null>, string | undefined, string>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | undefined, Date>;
};

export type SegmentsTable = { id: string; team_id: string; name: string; created_at: CreatedAt };

export type ContactSegmentsTable = { segment_id: string; contact_id: string; team_id: string; created_at: CreatedAt };

export type TopicsTable = {
  id: string;
  team_id: string;
  name: string;
  description: string | null;
  /** Immutable: a contact with no explicit choice has this subscription. */
  default_subscription: Subscription;
  visibility: Generated<'public' | 'private'>;
  created_at: CreatedAt;
};

/** A contact's explicit choice for a topic. */
export type ContactTopicsTable = {
  contact_id: string;
  topic_id: string;
  team_id: string;
  subscription: Subscription;
  updated_at: ColumnType<Date, Date | undefined, Date>;
};

export type ImportStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

/** A CSV import, its file kept until it completes, with its progress committed with each chunk of rows. */
export type ContactImportsTable = {
  id: string;
  team_id: string;
  status: Generated<ImportStatus>;
  on_conflict: 'upsert' | 'skip';
  /** Contact field (email, first_name, last_name, unsubscribed) or property id → CSV column name. */
  column_map: ColumnType<Record<string, string>, string | undefined, string>;
  segment_ids: ColumnType<string[], string[] | undefined, string[]>;
  topics: ColumnType<{ id: string; subscription: Subscription }[], string | undefined, string>;
  file: Buffer;
  /** Data rows read so far, and where the next one starts in `file`: where a restarted import resumes. */
  rows_done: Generated<number>;
  bytes_done: ColumnType<string, number | string | undefined, number | string>;
  total: Generated<number>;
  created: Generated<number>;
  updated: Generated<number>;
  skipped: Generated<number>;
  failed: Generated<number>;
  /** Why the whole import failed (an unreadable file, a missing email column). */
  error: string | null;
  created_at: CreatedAt;
  completed_at: Date | null;
};

/** A row of an import that was not written, with why. Row numbers count data rows from 1. */
export type ContactImportFailuresTable = { import_id: string; row_number: number; reason: string };

/** A template: what is not versioned, and which versions are current (edited) and published (sent). */
export type TemplatesTable = {
  id: string;
  team_id: string;
  name: string;
  /** Unique per team; usable instead of the id (never UUID-shaped, so the two cannot be confused). */
  alias: string | null;
  current_version_id: string;
  /** null: never published, so not sendable. */
  published_version_id: string | null;
  published_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | undefined, Date>;
};

/** One version of a template's content. */
export type TemplateVersionsTable = {
  id: string;
  template_id: string;
  team_id: string;
  from_header: string | null;
  subject: string | null;
  reply_to: string[] | null;
  html: string;
  text: string | null;
  variables: ColumnType<TemplateVariable[], string, string>;
  /** Who last wrote the version: a dashboard user or an API key (null: written before authors were kept). */
  author_type: 'user' | 'api_key' | null;
  author_id: string | null;
  /** When it was last made the published version (null: never). */
  published_at: Date | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | undefined, Date>;
};

/** `awaiting_approval` (Postline's): a member's send waiting for an admin, under the team's approval setting. */
export type BroadcastStatus = 'draft' | 'scheduled' | 'queued' | 'sent' | 'canceled' | 'awaiting_approval';

/** A broadcast: its message, its segment and topic, and how far its fan-out has got. */
export type BroadcastsTable = {
  id: string;
  team_id: string;
  name: string | null;
  segment_id: string | null;
  /** `from` as given (`Acme <o@example.com>`). */
  from_header: string | null;
  subject: string | null;
  reply_to: ColumnType<string[], string[] | undefined, string[]>;
  preview_text: string | null;
  html: string | null;
  text: string | null;
  topic_id: string | null;
  status: Generated<BroadcastStatus>;
  scheduled_at: Date | null;
  sent_at: Date | null;
  /** The last contact id of the fan-out's committed pages (null: none yet): where it resumes. */
  fan_out_after: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  /** While awaiting approval: the member who asked to send, when, and the time asked for (null: now). */
  approval_requested_by: ColumnType<string | null, string | null | undefined, string | null>;
  approval_requested_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  approval_scheduled_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The last rejection (null: none since it was last asked to send). rejected_by null: an API key. */
  rejected_by: ColumnType<string | null, string | null | undefined, string | null>;
  rejected_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  rejection_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * Its results and clicked links as they stood when its emails began to age out (the retention job writes
   * them first); null until then, while they are counted from the emails' rows.
   */
  final_results: ColumnType<FinalBroadcastResults | null, never, string>;
};

/** A broadcast's results kept once the rows they are counted from age out (see final_results). */
export type FinalBroadcastResults = {
  counts: Record<string, number>;
  links: { url: string; clicks: number; unique_clicks: number }[];
};

/** A team's broadcast settings (no row: the defaults). */
export type BroadcastSettingsTable = {
  team_id: string;
  require_approval: boolean;
  updated_at: Date;
};

/** A contact a broadcast reached: its email, or none (email_id null) when the address was suppressed. */
export type BroadcastRecipientsTable = {
  broadcast_id: string;
  contact_id: string;
  team_id: string;
  email: string;
  email_id: string | null;
  /** UUIDv7: the recipients list's opaque cursor. */
  id: string;
};

/** An SMTP transaction recorded before it starts, by the process making it (delivery/db/delivery-claims.ts). */
export type DeliveryClaimsTable = {
  email_id: string;
  first_position: number;
  attempt: number;
  instance_id: string;
  claimed_at: Date;
};

/** One SMTP transaction (or MX lookup) of a delivery attempt, with its transcript (delivery/smtp/transcript.ts). */
export type DeliveryAttemptsTable = {
  email_id: string;
  first_position: number;
  attempt: number;
  /** Order within the attempt. */
  seq: number;
  team_id: string;
  recipients: string[];
  mx: string | null;
  ip: string | null;
  port: number | null;
  tls_version: string | null;
  tls_cipher: string | null;
  started_at: Date;
  duration_ms: number;
  transcript: string[];
  omitted: number;
  /** The header block of the message as signed and sent; null for an MX lookup. */
  message_headers: string | null;
};

/** A message the MTA kept in the install (the development inbox) instead of sending it. */
export type DevInboxMessagesTable = {
  id: string;
  team_id: string;
  email_id: string;
  envelope_from: string;
  recipients: string[];
  raw: Buffer;
  size: number;
  kept_at: CreatedAt;
};

/** An email event kept for the email's timeline (written by the outbox's trigger). */
export type EmailEventsTable = {
  /** The outbox message's id: the webhook's source event. */
  id: string;
  team_id: string;
  email_id: string;
  type: string;
  occurred_at: Date;
  /** What the event carries beyond the email's own fields (`to`, `bounce`, `click`, ...). */
  data: Json<Record<string, unknown>>;
};

/** Counts by team, UTC hour, domain, broadcast (nil UUID: none), provider ('' : none) and metric. */
type MetricCounts = {
  team_id: string;
  hour: Date;
  domain_id: string;
  broadcast_id: string;
  provider: string;
  metric: string;
  n: ColumnType<string, number | string, number | string>;
};
export type EmailMetricsTable = MetricCounts;
export type EmailMetricDeltasTable = MetricCounts & { id: Generated<string> };

/** The reputation guard's tables (migration 202612101000): domain_id is the nil UUID for a team's own row. */
export type ReputationDeltasTable = {
  id: Generated<string>;
  team_id: string;
  domain_id: string;
  recorded_at: Date;
  sends: number;
  bounces: number;
  complaints: number;
};
export type ReputationPausesTable = {
  team_id: string;
  domain_id: string;
  domain_name: string | null;
  reason: 'bounce_rate' | 'complaint_rate';
  sends: ColumnType<string, number, number>;
  bounce_rate: number;
  complaint_rate: number;
  line: number;
  paused_at: Date;
};
/** The reputation guard's lines the operator set for a team (migration 202612111000); null: the install's. */
export type TeamReputationThresholdsTable = {
  team_id: string;
  bounce_rate: number | null;
  complaint_rate: number | null;
  window_sends: number | null;
  min_sends: number | null;
  changed_at: Date;
};
export type ParkedDeliveriesTable = {
  id: Generated<string>;
  team_id: string;
  domain_id: string;
  command: Json<Record<string, unknown>>;
  parked_at: Date;
};

/** One sender process's traffic shaping for one provider (deliverability/db/provider-shaping.ts). */
export type ProviderShapingTable = {
  process_id: string;
  replica: string;
  sending_ip: string | null;
  key: string;
  provider: 'gmail' | 'microsoft' | 'yahoo' | 'apple' | 'other';
  state: 'normal' | 'slowed' | 'held';
  rate_per_minute: number;
  limit_per_minute: number;
  connections: number;
  max_connections: number;
  max_messages_per_connection: number;
  deferrals: number;
  reason: string | null;
  held_until: Date | null;
  /** On the row of the other MX domains (key `other`) only: how many are slowed and held. */
  servers_slowed: number | null;
  servers_held: number | null;
  servers_first_held_until: Date | null;
  updated_at: Date;
};

export type SenderDb = MessagingTables & {
  reputation_deltas: ReputationDeltasTable;
  reputation_pauses: ReputationPausesTable;
  team_reputation_thresholds: TeamReputationThresholdsTable;
  parked_deliveries: ParkedDeliveriesTable;
  provider_shaping: ProviderShapingTable;
  email_events: EmailEventsTable;
  email_metrics: EmailMetricsTable;
  email_metric_deltas: EmailMetricDeltasTable;
  delivery_claims: DeliveryClaimsTable;
  delivery_attempts: DeliveryAttemptsTable;
  dev_inbox_messages: DevInboxMessagesTable;
  sending_domains: SendingDomainsTable;
  emails: EmailsTable;
  email_attachments: EmailAttachmentsTable;
  raw_emails: RawEmailsTable;
  recipients: RecipientsTable;
  accepted_requests: AcceptedRequestsTable;
  suppressions: SuppressionsTable;
  contact_properties: ContactPropertiesTable;
  contacts: ContactsTable;
  segments: SegmentsTable;
  contact_segments: ContactSegmentsTable;
  topics: TopicsTable;
  contact_topics: ContactTopicsTable;
  contact_imports: ContactImportsTable;
  contact_import_failures: ContactImportFailuresTable;
  broadcasts: BroadcastsTable;
  broadcast_recipients: BroadcastRecipientsTable;
  broadcast_settings: BroadcastSettingsTable;
  templates: TemplatesTable;
  template_versions: TemplateVersionsTable;
  email_engagements: EmailEngagementsTable;
  signup_forms: SignupFormsTable;
  form_signups: FormSignupsTable;
};

/** A hosted signup form (`/f/{public_id}`): what it asks, where it adds a contact, its confirmation email. */
export type SignupFormsTable = {
  id: string;
  team_id: string;
  /** The unguessable id in the form's public URL: the team's id and 16 random bytes, base64url. */
  public_id: string;
  name: string;
  segment_ids: string[];
  topic_ids: string[];
  /** The optional fields asked besides the email: `first_name`, `last_name`. */
  fields: string[];
  double_opt_in: boolean;
  /** The confirmation email's From; null without double opt-in. */
  from_header: string | null;
  subject: string | null;
  redirect_url: string | null;
  thank_you_message: string | null;
  enabled: boolean;
  /** Submits taken (not those the bot trap caught), a bigint read as a string. */
  submissions: ColumnType<string, string | undefined, string>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | undefined, Date>;
};

/** One address signed up through one form: pending until confirmed (double opt-in). */
export type FormSignupsTable = {
  id: string;
  team_id: string;
  form_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  status: 'pending' | 'confirmed';
  confirmation_sent_at: Date | null;
  confirmed_at: Date | null;
  contact_id: string | null;
  created_at: CreatedAt;
};

export type EngagementKind = 'open' | 'click';

/** One open or click of a sent email; `machine` is the open's machine_open or the click's scanner_click. */
export type EmailEngagementsTable = {
  id: string;
  team_id: string;
  email_id: string;
  kind: EngagementKind;
  /** The clicked URL; null for an open. */
  link: string | null;
  ip: string;
  user_agent: string;
  machine: boolean;
  created_at: Date;
};

export type SendingDomainRow = Selectable<SendingDomainsTable>;
export type EmailRow = Selectable<EmailsTable>;
export type RecipientRow = Selectable<RecipientsTable>;
export type SuppressionRow = Selectable<SuppressionsTable>;
export type ContactRow = Selectable<ContactsTable>;
export type ContactPropertyRow = Selectable<ContactPropertiesTable>;
export type SegmentRow = Selectable<SegmentsTable>;
export type TopicRow = Selectable<TopicsTable>;
export type SignupFormRow = Selectable<SignupFormsTable>;
export type FormSignupRow = Selectable<FormSignupsTable>;
export type ContactImportRow = Selectable<ContactImportsTable>;
export type TemplateRow = Selectable<TemplatesTable>;
export type TemplateVersionRow = Selectable<TemplateVersionsTable>;
export type BroadcastRow = Selectable<BroadcastsTable>;
