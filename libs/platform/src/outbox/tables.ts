import { sql, type ColumnType, type Generated, type Kysely } from 'kysely';
import type { MessageEnvelope } from '@postline/contracts';
import type { ExchangeKind } from '../broker/topology.ts';

/**
 * The messaging tables every service creates in its own schema, from its first migration. Frozen: a change
 * is a new `OUTBOX_TABLES_V2` applied by a new migration, never an edit here.
 *
 * - `outbox`: messages committed with the state change that caused them; the relay publishes them and
 *   deletes each once the broker confirms it (`published_at`, set by earlier relays, is no longer
 *   written). `id` is the envelope id (UUIDv7, so `order by id` is roughly commit order). `exchange` is
 *   the logical exchange (`events` | `commands`), resolved with BROKER_PREFIX at publish time.
 * - `inbox`: one row per (consumer, message id) handled, written in the handler's transaction, so a
 *   redelivered message has no second effect.
 */
export const OUTBOX_TABLES_V1: readonly string[] = Object.freeze([
  `create table outbox (
    id uuid primary key,
    exchange text not null check (exchange in ('events', 'commands')),
    routing_key text not null,
    envelope jsonb not null,
    created_at timestamptz not null default now(),
    published_at timestamptz
  )`,
  `create index outbox_unpublished_idx on outbox (id) where published_at is null`,
  `create index outbox_published_at_idx on outbox (published_at) where published_at is not null`,
  `create table inbox (
    consumer text not null,
    message_id uuid not null,
    processed_at timestamptz not null default now(),
    primary key (consumer, message_id)
  )`,
  `create index inbox_processed_at_idx on inbox (processed_at)`,
]);

export type OutboxTable = {
  id: string;
  exchange: ExchangeKind;
  routing_key: string;
  /** Selected as the parsed object; inserted as a JSON string. */
  envelope: ColumnType<MessageEnvelope, string, never>;
  created_at: Generated<Date>;
  published_at: Date | null;
};

export type InboxTable = { consumer: string; message_id: string; processed_at: Generated<Date> };

/** Add to a service's kysely type when it queries these tables itself (tests, admin tools). */
export type MessagingTables = { outbox: OutboxTable; inbox: InboxTable };

/**
 * Applies OUTBOX_TABLES_V1: creates `outbox` and `inbox` in the schema the connection resolves to (the service's own). Call it from
 * the service's first migration.
 *
 * @example
 * // services/sender/migrations/202601010000_messaging.ts
 * export async function up(db: Kysely<any>) { await createMessagingTables(db); }
 */
export async function createMessagingTables<DB>(db: Kysely<DB>): Promise<void> {
  for (const statement of OUTBOX_TABLES_V1) await sql.raw(statement).execute(db);
}

/** The LISTEN/NOTIFY channel that wakes a schema's relay; unique per schema within one database. */
export function outboxChannel(schema: string): string {
  return `outbox_${schema}`;
}

/**
 * SQL that notifies the relay of the current schema (the `outboxChannel` of `current_schema()`); Postgres
 * delivers it only at commit. For a statement that writes outbox rows itself rather than through `enqueue`.
 *
 * @example
 * sql`with o as (insert into outbox ... ) select ${PREPARED} ${NOTIFY_RELAY}`
 */
export const NOTIFY_RELAY = sql`pg_notify('outbox_' || current_schema(), '')`;
