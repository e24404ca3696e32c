import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | undefined, never>;

export type TeamsTable = {
  id: string;
  name: string;
  access_enabled: Generated<boolean>;
  /** Per-team override of RATE_LIMIT_PER_SECOND; null uses the default. */
  rate_limit_per_second: number | null;
  /** Days its rows that grow with traffic are kept; null uses DEFAULT_RETENTION_DAYS. */
  retention_days: number | null;
  /** When the operator last set retention_days: orders the pushes to the owners. */
  retention_changed_at: Date | null;
  /** The owners have yet to be told of the last change (the retention-sync job). */
  retention_unsynced: Generated<boolean>;
  /** The reputation guard's lines set for this team (fractions; sends); each null takes the install's. */
  reputation_bounce_rate: number | null;
  reputation_complaint_rate: number | null;
  reputation_window: number | null;
  reputation_min_sends: number | null;
  /** When the operator last set or cleared them: orders the pushes to the sender. */
  reputation_changed_at: Date | null;
  /** The sender has yet to be told of the last change (the reputation-sync job). */
  reputation_unsynced: Generated<boolean>;
  created_at: CreatedAt;
};

export type ApiKeysTable = {
  id: string;
  team_id: string;
  name: string;
  permission: 'full_access' | 'sending_access';
  /** Only with sending_access: the one domain this key may send from. */
  domain_id: string | null;
  /** SHA-256 (hex) of the whole token; the token itself is never stored. */
  token_hash: string;
  token_last4: string;
  created_at: CreatedAt;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
};

export type RequestLogsTable = {
  id: string;
  team_id: string;
  api_key_id: string | null;
  /** The signed-in user of a dashboard session's request (api_key_id is then null). */
  user_id: string | null;
  endpoint: string;
  method: string;
  response_status: number;
  user_agent: string | null;
  request_body: unknown;
  response_body: unknown;
  created_at: CreatedAt;
};

export type IdempotencyKeysTable = {
  team_id: string;
  key: string;
  /** SHA-256 of the method, path and canonical JSON body. */
  request_hash: string;
  state: 'in_flight' | 'done';
  /** The claim that owns the row while in flight. */
  claim_id: string | null;
  /** While in flight: until when the claim holds (renewed by its gateway); past it, a retry takes the key over. */
  lease_expires_at: Generated<Date>;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  /** The exact response bytes, replayed as they were. */
  response_body: Buffer | null;
  created_at: CreatedAt;
  expires_at: Date;
};

export type UsersTable = {
  id: string;
  email: string;
  name: string;
  /** scrypt, in the self-describing form of accounts/password.ts. */
  password_hash: string;
  created_at: CreatedAt;
};

export type Role = 'admin' | 'member';

export type TeamMembersTable = {
  team_id: string;
  user_id: string;
  role: Role;
  created_at: CreatedAt;
};

export type SessionsTable = {
  id: string;
  user_id: string;
  /** The team the session acts on (the team switcher changes it). */
  team_id: string;
  /** SHA-256 (hex) of the cookie's token; the token itself is never stored. */
  token_hash: string;
  ip: string | null;
  user_agent: string | null;
  created_at: CreatedAt;
  /** Moved forward as the session is used (at most once a minute); the idle expiry counts from it. */
  last_seen_at: Date;
  /** The absolute expiry, whatever the use. */
  expires_at: Date;
  revoked_at: Date | null;
};

export type SetupTokensTable = {
  token_hash: string;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
};

export type AuditLogTable = {
  id: string;
  team_id: string;
  actor_type: 'user' | 'api_key';
  actor_id: string;
  /** `<family>.<verb>`, e.g. `api-keys.created`, `domains.verify` (domain/audit.ts). */
  action: string;
  target_type: string;
  target_id: string | null;
  method: string;
  endpoint: string;
  ip: string | null;
  user_agent: string | null;
  created_at: CreatedAt;
};

export type InvitesTable = {
  id: string;
  team_id: string;
  email: string;
  role: Role;
  token_hash: string;
  invited_by: string;
  created_at: CreatedAt;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
};

export type PasswordResetsTable = {
  token_hash: string;
  user_id: string;
  created_by: string;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
};

/** An email to one person about their team (a webhook endpoint disabled), kept until it is sent. */
export type NoticeEmailsTable = {
  /** The broker message that caused it: with user_id, what makes a redelivery add nothing. */
  message_id: string;
  user_id: string;
  team_id: string;
  to_address: string;
  subject: string;
  text: string;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  sent_at: Date | null;
  created_at: CreatedAt;
};

/** Only the gateway's own tables: another service's tables cannot be typed here. */
export type GatewayDb = {
  teams: TeamsTable;
  api_keys: ApiKeysTable;
  request_logs: RequestLogsTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  team_members: TeamMembersTable;
  sessions: SessionsTable;
  setup_tokens: SetupTokensTable;
  audit_log: AuditLogTable;
  invites: InvitesTable;
  password_resets: PasswordResetsTable;
  notice_emails: NoticeEmailsTable;
};

export type Team = Selectable<TeamsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type NewRequestLog = Insertable<RequestLogsTable>;
export type IdempotencyRecord = Selectable<IdempotencyKeysTable>;
export type User = Selectable<UsersTable>;
export type Session = Selectable<SessionsTable>;
export type NewAuditEntry = Insertable<AuditLogTable>;
