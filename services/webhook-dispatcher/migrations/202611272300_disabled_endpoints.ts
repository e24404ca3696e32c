import { sql, type Kysely } from 'kysely';

// Frozen. When an endpoint was disabled and by what (its run of failures, or a call to the API): events that
// happen while failures keep it disabled are recorded for it as failed (`failure_reason`), so that a bulk
// replay once it is enabled again recovers them.
const UP = [
  `alter table webhook_endpoints add column disabled_at timestamptz`,
  `alter table webhook_endpoints add column disabled_by text check (disabled_by in ('failures', 'api'))`,
  `update webhook_endpoints set disabled_at = updated_at, disabled_by = case when disabled_reason = 'disabled through the API' then 'api' else 'failures' end where status = 'disabled'`,
  `alter table webhook_events add column failure_reason text check (failure_reason in ('endpoint_disabled'))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_events drop column failure_reason`.execute(db);
  await sql`alter table webhook_endpoints drop column disabled_by`.execute(db);
  await sql`alter table webhook_endpoints drop column disabled_at`.execute(db);
}
