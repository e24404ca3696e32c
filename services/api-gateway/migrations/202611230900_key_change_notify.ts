import { sql, type Kysely } from 'kysely';

// Frozen. Any change to a key or a team that decides access (revoked, team disabled, rate limit), from the API, the
// admin CLI or an operator's psql, notifies the gateways so they drop their cached keys.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create function notify_key_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('api_keys_' || tg_table_schema, '');
      return null;
    end $$`.execute(db);
  // Not on last_used_at, which the gateways themselves write every few seconds.
  await sql`create trigger api_keys_changed
    after update of team_id, permission, domain_id, token_hash, expires_at, revoked_at or delete or truncate on api_keys
    for each statement execute function notify_key_change()`.execute(db);
  await sql`create trigger teams_changed after update or delete or truncate on teams
    for each statement execute function notify_key_change()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['api_keys', 'teams']) {
    await sql`drop trigger ${sql.id(`${table}_changed`)} on ${sql.id(table)}`.execute(db);
  }
  await sql`drop function notify_key_change()`.execute(db);
}
