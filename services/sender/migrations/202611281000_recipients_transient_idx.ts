import { sql, type Kysely } from 'kysely';

// Frozen. The count of an address's recent transient bounces compares addresses without case (a local
// part keeps the case it was sent with): an index of the transient rows alone by team and lower(address),
// so that the count probes it instead of reading every transient recipient of the team.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index recipients_transient_address_idx on recipients (team_id, lower(address)) where bounce_type = 'Transient'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists recipients_transient_address_idx`.execute(db);
}
