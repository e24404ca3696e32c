import type { ColumnType, Generated, Selectable } from 'kysely';
import type { DomainRecordStatus, DomainStatus } from '@postline/contracts';
import type { MessagingTables } from '@postline/platform';
import type { RecordKind } from '../domain/records.ts';

type CreatedAt = ColumnType<Date, Date | undefined, never>;

export type DomainsTable = {
  id: string;
  team_id: string;
  /** Lower-case ASCII, unique across all teams. */
  name: string;
  /** Registrable domain the records are entered in. */
  zone: string;
  region: string;
  status: DomainStatus;
  custom_return_path: string;
  open_tracking: Generated<boolean>;
  click_tracking: Generated<boolean>;
  tracking_subdomain: string | null;
  tls: 'opportunistic' | 'enforced';
  sending: boolean;
  receiving: boolean;
  sending_verified: Generated<boolean>;
  receiving_verified: Generated<boolean>;
  /** Both tracking records (CNAME and CAA) verified; false while no tracking subdomain is set. */
  tracking_verified: Generated<boolean>;
  dkim_selector: string;
  /** Base64 SubjectPublicKeyInfo (DER); published in the DKIM record. */
  dkim_public_key: string;
  /** PKCS#8 PEM sealed with POSTLINE_SECRET_KEY; never returned by the API. */
  dkim_private_key_encrypted: string;
  /** Start of the current search window (creation, a re-verify after failure, or a lost verification). */
  window_started_at: Date;
  checks_in_window: Generated<number>;
  last_checked_at: Date | null;
  next_check_at: Date | null;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
};

export type DomainRecordsTable = {
  domain_id: string;
  kind: RecordKind;
  status: DomainRecordStatus;
  /** Why the last check did not verify it (no secrets, safe to show). */
  detail: string | null;
  checked_at: Date | null;
};

export type DomainChecksTable = {
  id: string;
  domain_id: string;
  trigger: 'scheduled' | 'manual';
  status: DomainStatus;
  findings: ColumnType<unknown, string, never>;
  checked_at: Generated<Date>;
};

export type DomainClaimStatus =
  | 'pending'
  | 'verified'
  | 'completed'
  | 'blocked'
  | 'expired'
  | 'superseded'
  | 'canceled'
  | 'failed';

/** A team's claim of a domain another team registered (POST /domains/claim). */
export type DomainClaimsTable = {
  id: string;
  /** The claiming team. */
  team_id: string;
  /** The id the domain gets under the claiming team when the claim completes. */
  domain_id: string;
  /** Lower-case ASCII, as domains.name. */
  name: string;
  zone: string;
  region: string;
  custom_return_path: string;
  open_tracking: boolean;
  click_tracking: boolean;
  tracking_subdomain: string | null;
  /** The secret part of the TXT record's value. */
  token: string;
  status: DomainClaimStatus;
  failure_reason: string | null;
  created_at: Date;
  expires_at: Date;
  updated_at: Date;
};

/** Only the domain-verifier's own tables (domains, DNS records, DKIM keys and check history); another service's tables cannot be typed here. */
export type DomainsDb = MessagingTables & {
  domains: DomainsTable;
  domain_records: DomainRecordsTable;
  domain_checks: DomainChecksTable;
  domain_claims: DomainClaimsTable;
};

export type DomainRow = Selectable<DomainsTable>;
export type DomainRecordRow = Selectable<DomainRecordsTable>;
export type DomainClaimRow = Selectable<DomainClaimsTable>;
