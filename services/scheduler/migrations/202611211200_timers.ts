import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
//
// One row per timer key, kept after the timer fires or is cancelled (a tombstone) so that an older command
// arriving late cannot bring it back: every command carries its envelope id (UUIDv7, time-ordered) and
// only a command newer than `command_id` changes the row. `message` is dropped once fired or cancelled;
// a `failed` row keeps it (its message no longer matches the contracts catalog, so it was not published).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table timers (
    key text primary key,
    state text not null check (state in ('pending', 'fired', 'cancelled', 'failed')),
    due_at timestamptz,
    routing_key text,
    message jsonb,
    command_id uuid not null,
    updated_at timestamptz not null default now(),
    check (state <> 'pending' or (due_at is not null and routing_key is not null and message is not null))
  )`.execute(db);
  // The firing loop's claim and next-due queries; only pending rows, so tombstones cost it nothing.
  await sql`create index timers_pending_due_idx on timers (due_at) where state = 'pending'`.execute(db);
  // Tombstone pruning.
  await sql`create index timers_settled_idx on timers (updated_at) where state <> 'pending'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table timers`.execute(db);
}
