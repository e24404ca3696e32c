import type { ColumnType, Generated, Selectable } from 'kysely';
import type { PublicEventType } from '@postline/contracts';
import type { MessagingTables } from '@postline/platform';

type CreatedAt = ColumnType<Date, Date | undefined, never>;

export type WebhookEndpointsTable = {
  id: string;
  team_id: string;
  endpoint: string;
  events: PublicEventType[];
  status: 'enabled' | 'disabled';
  /** `whsec_…` sealed with POSTLINE_SECRET_KEY. */
  secret_encrypted: string;
  /** The secret before the last rotation: still signs (second) until it expires, 24 h after rotating. */
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  /** First failed attempt of the current unbroken run of failures; null after any success. */
  failing_since: Date | null;
  disabled_reason: string | null;
  /** When it was last disabled; null while enabled. */
  disabled_at: Date | null;
  /**
   * What disabled it: its run of failures (events keep being recorded for it, as failed, to replay once it is
   * enabled again) or the API (nothing is recorded: the team asked for no events). Null while enabled.
   */
  disabled_by: 'failures' | 'api' | null;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
};

export type WebhookEventStatus = 'pending' | 'attempting' | 'success' | 'failed';

export type WebhookEventsTable = {
  /** `msg_` + UUIDv7 hex: the `webhook-id` of every delivery of this event. */
  id: string;
  endpoint_id: string;
  team_id: string;
  /** The broker envelope id of the public event: one record per endpoint and event. */
  source_event_id: string;
  type: PublicEventType;
  /** The exact bytes signed and sent: `{type, created_at, data}`. */
  body: string;
  status: WebhookEventStatus;
  /** Scheduled attempts made (replays not counted). */
  attempts_made: Generated<number>;
  next_attempt_at: Date | null;
  /** Why a failed event ended without its attempts (its endpoint disabled by failures); null otherwise. */
  failure_reason: 'endpoint_disabled' | null;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
};

export type WebhookAttemptsTable = {
  /** `atmpt_` + UUIDv7 hex. */
  id: string;
  event_id: string;
  endpoint_id: string;
  /** 1–8 for scheduled attempts; null for a replay. */
  attempt: number | null;
  replay: Generated<boolean>;
  sent_at: Date;
  http_status_code: number | null;
  /** First 4 KB of the response body. */
  response: string;
  error: string | null;
  duration_ms: number;
};

/** Only the webhook-dispatcher's own tables (webhook endpoints, events and attempts); another service's tables cannot be typed here. */
export type DispatcherDb = MessagingTables & {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_attempts: WebhookAttemptsTable;
};

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type EventRow = Selectable<WebhookEventsTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;
