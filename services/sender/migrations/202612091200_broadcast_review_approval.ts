import { sql, type Kysely } from 'kysely';

// Frozen. A team may require an admin's approval before a member's broadcast goes out.
//
// `broadcast_settings` holds the team's choice (no row: not required). A broadcast waiting for approval is
// in the new status `awaiting_approval`; the request (who, when, and the time asked for: null for now) is
// kept on the broadcast until an admin approves it (it then sends or schedules) or rejects it (back to
// draft, with the reason kept until it is sent again).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table broadcasts drop constraint if exists broadcasts_status_check`.execute(db);
  await sql`alter table broadcasts add constraint broadcasts_status_check
    check (status in ('draft', 'scheduled', 'queued', 'sent', 'canceled', 'awaiting_approval'))`.execute(db);
  await sql`alter table broadcasts
    add column approval_requested_by uuid,
    add column approval_requested_at timestamptz,
    add column approval_scheduled_at timestamptz,
    add column rejected_by uuid,
    add column rejected_at timestamptz,
    add column rejection_reason text`.execute(db);
  await sql`create table broadcast_settings (
    team_id uuid primary key,
    require_approval boolean not null default false,
    updated_at timestamptz not null default now()
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists broadcast_settings`.execute(db);
  await sql`update broadcasts set status = 'draft' where status = 'awaiting_approval'`.execute(db);
  await sql`alter table broadcasts
    drop column if exists approval_requested_by,
    drop column if exists approval_requested_at,
    drop column if exists approval_scheduled_at,
    drop column if exists rejected_by,
    drop column if exists rejected_at,
    drop column if exists rejection_reason`.execute(db);
  await sql`alter table broadcasts drop constraint if exists broadcasts_status_check`.execute(db);
  await sql`alter table broadcasts add constraint broadcasts_status_check
    check (status in ('draft', 'scheduled', 'queued', 'sent', 'canceled'))`.execute(db);
}
