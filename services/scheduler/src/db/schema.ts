import type { ColumnType } from 'kysely';
import type { MessageEnvelope } from '@postline/contracts';
import type { MessagingTables } from '@postline/platform';

/**
 * `pending` fires at `due_at`; `fired`, `cancelled` and `failed` (its message no longer parses, so it was
 * not published) are tombstones, kept for TOMBSTONE_RETENTION_MS.
 */
export type TimerState = 'pending' | 'fired' | 'cancelled' | 'failed';

export type TimersTable = {
  key: string;
  state: TimerState;
  /** Set while pending; kept on tombstones; null on a cancel that found no timer. */
  due_at: Date | null;
  routing_key: string | null;
  /** The envelope to publish as is (its id and occurred_at kept); null once fired or cancelled. */
  message: ColumnType<MessageEnvelope | null, string | null, string | null>;
  /** Envelope id (UUIDv7) of the last command applied to this key; older commands are ignored. */
  command_id: string;
  updated_at: ColumnType<Date, Date | undefined, Date | undefined>;
};

/** Only the scheduler's own tables (durable timers); another service's tables cannot be typed here. */
export type SchedulerDb = MessagingTables & { timers: TimersTable };
