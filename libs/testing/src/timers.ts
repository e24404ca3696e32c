import { sql, type Kysely } from 'kysely';

/**
 * Makes the scheduler's pending timers `keys` due now, so that a test need not wait out a time the system
 * set (a scheduled send, an expiry); `db` is any connection to the system's database. The scheduler polls
 * for due timers, so they fire within a poll. Resolves with how many were there and pending (a timer's
 * command may still be on its way to the scheduler: call again until what it causes is seen). One
 * statement, one connection, however many keys.
 */
export async function makeTimerDue<DB>(db: Kysely<DB>, ...keys: string[]): Promise<number> {
  const { numAffectedRows } = await sql`update scheduler.timers set due_at = now()
    where key = any(${keys}::text[]) and state = 'pending'`.execute(db);
  return Number(numAffectedRows ?? 0);
}
