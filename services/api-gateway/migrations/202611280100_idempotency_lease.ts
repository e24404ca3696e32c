import { sql, type Kysely } from 'kysely';

// Frozen. A key in flight is held by a lease its gateway renews while the request is in flight: a retry takes
// over a key whose lease ran out (its gateway died) within seconds. A row written without one (a gateway of
// the version before, during a rolling update) has its lease run out at once: its retry is taken over, and
// the owner's own record of the key keeps it from sending twice.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table idempotency_keys add column lease_expires_at timestamptz not null default now()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table idempotency_keys drop column lease_expires_at`.execute(db);
}
