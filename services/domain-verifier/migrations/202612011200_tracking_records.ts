import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
// The tracking subdomain's records (its CNAME to TRACKING_HOST and the CAA check), and whether both are
// verified. Every domain keeps one row per record kind, shown or not: the new kinds start not_started.
const STATEMENTS = [
  `alter table domain_records drop constraint domain_records_kind_check`,
  `alter table domain_records add constraint domain_records_kind_check
    check (kind in ('dkim', 'spf_mx', 'spf_txt', 'receiving_mx', 'tracking_cname', 'tracking_caa'))`,
  `insert into domain_records (domain_id, kind, status, detail, checked_at)
    select id, kind, 'not_started', null, null from domains cross join (values ('tracking_cname'), ('tracking_caa')) as kinds (kind)
    on conflict do nothing`,
  `alter table domains add column tracking_verified boolean not null default false`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
