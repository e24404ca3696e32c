import { sql, type Kysely } from 'kysely';

// Frozen. The recipients not yet in a final state, which the sender's /metrics counts on every scrape: an
// index of those alone, so that a scrape reads the waiting few rather than every recipient ever sent to.
// Its predicate is a column of its own, which no other query names: an index whose predicate followed from
// `status in ('pending', 'deferred')` would also be taken for the delivery reads that filter on it, and
// scanned whole for each email (measured: 81 ms a read with 100,000 recipients waiting).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table recipients add column waiting boolean generated always as (status in ('pending', 'deferred')) stored`.execute(
    db,
  );
  await sql`create index recipients_waiting_idx on recipients (status, updated_at) where waiting`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table recipients drop column if exists waiting`.execute(db);
}
