import { sql, type Kysely } from 'kysely';

// Frozen. Traffic shaping per mailbox provider as each sender process has it: one row per process and
// provider (or other MX domain while it is slowed or held), written every few seconds while it changes and
// refreshed while it does not, deleted when the process stops. A row not refreshed for 30 s is a process
// that died: the view ignores it and the writers delete it after a few minutes, so the table holds a few
// rows per running process. Nothing references it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table provider_shaping (
    process_id uuid not null,
    replica text not null,
    sending_ip text,
    key text not null,
    provider text not null,
    state text not null check (state in ('normal', 'slowed', 'held')),
    rate_per_minute double precision not null,
    limit_per_minute double precision not null,
    connections int not null,
    max_connections int not null,
    max_messages_per_connection int not null,
    deferrals int not null,
    reason text,
    held_until timestamptz,
    updated_at timestamptz not null,
    primary key (process_id, key)
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists provider_shaping`.execute(db);
}
