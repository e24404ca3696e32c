import type { Selectable } from 'kysely';
import type { ReturnPathOutcome } from '../domain/return-path-report.ts';

/** One message received for one RCPT at a return-path domain, and what became of it. */
export type ReturnPathMailTable = {
  id: string;
  /** The team whose domain's return path the RCPT is at. */
  team_id: string;
  received_at: Date;
  /** The RCPT address, lower-case. */
  recipient: string;
  /** SHA-256 of the raw message: with `recipient`, unique, so the MX's redelivery of a message is recorded once. */
  message_sha256: Buffer;
  /** MAIL FROM as given (`''` for the null reverse-path of a DSN). */
  envelope_from: string;
  remote_address: string;
  outcome: ReturnPathOutcome;
  /** The email a verified VERP address names, or null. */
  email_id: string | null;
  /** Why this outcome, in a few words (`VERP tag does not verify`, `feedback type abuse`). */
  detail: string;
  /** `internal.email.feedback` messages published (one per failed or complaining recipient). */
  feedback_count: number;
  /** The report's fields, or the start of its text: at most 2,000 characters, never the whole message. */
  excerpt: string;
};

/** Mail received at return-path domains (bounces, complaints, unsubscribe requests). */
export type ReturnPathTables = { return_path_mail: ReturnPathMailTable };

export type ReturnPathMailRow = Selectable<ReturnPathMailTable>;
