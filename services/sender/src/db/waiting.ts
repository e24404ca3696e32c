import { sql, type Kysely } from 'kysely';
import type { SenderDb } from './schema.ts';

export type Waiting = { status: 'pending' | 'deferred'; n: number; oldest: number | null };

/**
 * The recipients not yet in a final state, by status, with the age in seconds of the oldest: what every
 * /metrics scrape reports. Read through their own partial index, never by scanning all recipients.
 */
export async function waitingRecipients(db: Kysely<SenderDb>): Promise<Waiting[]> {
  const { rows } = await sql<Waiting>`
    select status, count(*)::int as n, extract(epoch from now() - min(updated_at))::float8 as oldest
    from recipients where waiting group by status order by status`.execute(db);
  return rows;
}
