import { sql, type Kysely } from 'kysely';

// Frozen. Who changed what in a team, when and from where: one row per successful change made through the gateway.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table audit_log (
      id uuid primary key,
      team_id uuid not null references teams(id),
      actor_type text not null check (actor_type in ('user', 'api_key')),
      actor_id uuid not null,
      action text not null,
      target_type text not null,
      target_id text,
      method text not null,
      endpoint text not null,
      ip text,
      user_agent text,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index audit_log_team_idx on audit_log (team_id, id desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table audit_log`.execute(db);
}
