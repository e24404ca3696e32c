import type { ColumnType, Generated, Selectable } from 'kysely';
import type { BounceSubType, BounceType, DomainStatus, SuppressionOrigin } from '@postline/contracts';
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
  | 'complained';

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

export type RecipientStatus = 'pending' | 'deferred' | 'delivered' | 'bounced' | 'failed' | 'suppressed' | 'complained' | 'canceled';

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
export type SenderDb = MessagingTables & {
  sending_domains: SendingDomainsTable;
  emails: EmailsTable;
  email_attachments: EmailAttachmentsTable;
  recipients: RecipientsTable;
  accepted_requests: AcceptedRequestsTable;
  suppressions: SuppressionsTable;
};

export type SendingDomainRow = Selectable<SendingDomainsTable>;
export type EmailRow = Selectable<EmailsTable>;
export type RecipientRow = Selectable<RecipientsTable>;
export type SuppressionRow = Selectable<SuppressionsTable>;
