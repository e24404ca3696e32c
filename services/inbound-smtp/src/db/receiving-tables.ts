import type { Generated, Selectable } from 'kysely';
import type { AuthVerdict } from '../domain/authentication-verdicts.ts';

/** The inbound-smtp's read model of a domain, kept from `internal.domain.state`. */
export type ReceivingDomainsTable = {
  domain_id: string;
  team_id: string;
  /** Lower-case, as the domain-verifier keeps it. */
  name: string;
  /** e.g. `send.example.com`: the VERP addresses' domain, where bounces and complaints come back. */
  return_path: string;
  /** Receiving enabled and its MX record verified: mail to the domain is accepted. */
  receiving_verified: boolean;
  /** The sending capability is enabled: its return path takes bounces and complaints. */
  sending_enabled: boolean;
  /** A tombstone: the domain was deleted; kept so that no older state revives it. */
  deleted: Generated<boolean>;
  /** occurred_at of the state applied: an older state arriving late is ignored. */
  state_at: Date;
};

/** A message as the MX received it (after bare CR/LF normalisation), shared by the emails it became. */
export type ReceivedRawMessagesTable = {
  id: string;
  content: Buffer;
  size: number;
  received_at: Date;
};

/** One team's received email: a message as parsed, for the recipients at that team's domains. */
export type ReceivedEmailsTable = {
  id: string;
  team_id: string;
  raw_id: string;
  created_at: Date;
  /** MAIL FROM as given (`''` for the null reverse-path). */
  envelope_from: string;
  /** The RCPT addresses at this team's domains. */
  received_for: string[];
  remote_address: string;
  helo: string;
  /** The Message-ID header (`<…>`), or one we made when the message had none. */
  message_id: string;
  /** The From header's first address, bare (`''` when it had none). */
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  reply_to_addresses: string[];
  subject: string;
  /** With `cid:` references as the message has them (GET turns them into data: URIs on demand). */
  html: string | null;
  text: string | null;
  /** Lower-case header names → their unfolded, decoded values (the first occurrence of a repeated one). */
  headers: Record<string, string>;
  spf: AuthVerdict;
  dkim: AuthVerdict;
  dmarc: AuthVerdict;
  /** Why the message could not be parsed in full (stored raw, returned best-effort), or null. */
  parse_error: string | null;
};

export type ReceivedAttachmentsTable = {
  id: string;
  email_id: string;
  /** The attachment's place among the email's, from 0. */
  position: number;
  filename: string | null;
  content_type: string;
  /** `inline` or `attachment` as the part said, or null when it said nothing. */
  content_disposition: string | null;
  /** Without the angle brackets, as `cid:` references name it. */
  content_id: string | null;
  size: number;
  content: Buffer;
};

/** Received emails, their attachments and raw MIME, and the read model of domains. */
export type ReceivingTables = {
  receiving_domains: ReceivingDomainsTable;
  received_raw_messages: ReceivedRawMessagesTable;
  received_emails: ReceivedEmailsTable;
  received_attachments: ReceivedAttachmentsTable;
};

export type ReceivingDomainRow = Selectable<ReceivingDomainsTable>;
export type ReceivedEmailRow = Selectable<ReceivedEmailsTable>;
export type ReceivedAttachmentRow = Selectable<ReceivedAttachmentsTable>;
