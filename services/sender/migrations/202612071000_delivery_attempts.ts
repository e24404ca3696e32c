import { sql, type Kysely } from 'kysely';

// Frozen. Delivery attempts: for each SMTP transaction (or the MX lookup that found no host to try), which
// MX host and address were dialled, the TLS of the session, and the transcript of our commands and the
// server's replies (never the message body), bounded in size, and the header block of the message as signed
// and sent (its DKIM-Signature). Written with the attempt's recipients' states;
// a copy of the same attempt writes nothing twice.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table delivery_attempts (
    email_id uuid not null,
    first_position int not null,
    attempt int not null,
    seq int not null,
    team_id uuid not null,
    recipients text[] not null,
    mx text,
    ip text,
    port int,
    tls_version text,
    tls_cipher text,
    started_at timestamptz not null,
    duration_ms int not null,
    transcript text[] not null,
    omitted int not null default 0,
    message_headers text,
    primary key (email_id, first_position, attempt, seq)
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists delivery_attempts`.execute(db);
}
