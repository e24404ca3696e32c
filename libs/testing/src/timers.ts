import { sql, type Kysely } from 'kysely';

/**
 * Makes the scheduler's pending timer `key` due now, so that a test need not wait out a time the system
 * set (a scheduled send, an expiry); `db` is any connection to the system's database. The scheduler polls
 * for due timers, so it fires within a poll. Resolves with whether the timer was there and pending (its
 * command may still be on its way to the scheduler: call again until what it causes is seen).
 */
export async function makeTimerDue<DB>(db: Kysely<DB>, key: string): Promise<boolean> {
  const { numAffectedRows } = await sql`update scheduler.timers set due_at = now()
    where key = ${key} and state = 'pending'`.execute(db);
  return numAffectedRows === 1n;
}
