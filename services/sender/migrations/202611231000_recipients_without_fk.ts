import { sql, type Kysely } from 'kysely';

// Frozen. Recipients are written only by the statement that writes their email, and emails are never
// deleted, so the foreign key checked nothing; it cost a lookup and a row lock on the email (a WAL record)
// for every recipient inserted, the largest part of accepting a batch.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table recipients drop constraint if exists recipients_email_id_fkey`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table recipients add constraint recipients_email_id_fkey foreign key (email_id) references emails (id) on delete cascade`.execute(
    db,
  );
}
