import { sql, type Kysely } from 'kysely';

// Frozen. A sender process writes the other MX domains it slows or holds as one row (key `other`) counting
// them, instead of a row per domain naming it: the view is read by every team and names no company's mail
// server. The counts and the first hold to end are set on that row only (held_until is the last).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table provider_shaping
    add column servers_slowed int check (servers_slowed >= 0),
    add column servers_held int check (servers_held >= 0),
    add column servers_first_held_until timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table provider_shaping
    drop column if exists servers_slowed,
    drop column if exists servers_held,
    drop column if exists servers_first_held_until`.execute(db);
}
