import { sql, type Kysely } from 'kysely';

// Frozen. Open and click tracking in the sender's read model of sending domains, from
// `internal.domain.state`: what the customer asked for (open_tracking, click_tracking), the tracking host's
// label (tracking_subdomain: `links` for `links.<name>`, null for none) and whether its records are verified
// (tracking_verified). Tracking is applied only when tracking_verified; rows written before this migration
// read as no tracking until their domain's next state.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sending_domains
    add column open_tracking boolean not null default false,
    add column click_tracking boolean not null default false,
    add column tracking_subdomain text,
    add column tracking_verified boolean not null default false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sending_domains
    drop column if exists open_tracking,
    drop column if exists click_tracking,
    drop column if exists tracking_subdomain,
    drop column if exists tracking_verified`.execute(db);
}
