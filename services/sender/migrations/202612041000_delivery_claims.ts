import { sql, type Kysely } from 'kysely';

// Frozen. Delivery claims: each SMTP transaction is recorded before it starts (which email, which of its
// recipients' commands, which attempt, which sender process), and the process keeps the record fresh while
// the attempt is under way. A copy of the delivery command that finds a fresh claim of another process
// waits for that process's outcome instead of sending too; one that finds a stale claim knows the message
// may have gone out (the process died holding it) and sends it again. Pruned by age; nothing references it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table delivery_claims (
    email_id uuid not null,
    first_position int not null,
    attempt int not null,
    instance_id uuid not null,
    claimed_at timestamptz not null,
    primary key (email_id, first_position, attempt)
  )`.execute(db);
  await sql`create index delivery_claims_claimed_at on delivery_claims (claimed_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists delivery_claims`.execute(db);
}
