import { sql, type Kysely } from 'kysely';
import type { MessageEnvelope } from '@postline/contracts';
import type { TimerToSet } from '../domain/timer.ts';
import type { SchedulerDb } from './schema.ts';

// Queries over `db | trx`; the caller owns the transaction. Command ordering (last writer wins by command
// id) is enforced here, in the `where` of each upsert, so it holds under any interleaving of replicas:
// `insert ... on conflict do update ... where` locks the key's row and re-checks against its latest version.

/**
 * Stores a pending timer for `key` unless a newer command (set or cancel) is already recorded for it.
 * Replaces a pending timer (reschedule), and re-arms a fired or cancelled key when this set is newer.
 * When the timer is due within `wakeWithinMs`, notifies the firing loops (delivered at commit), which
 * otherwise would only see it at their next poll. Returns false for a stale command.
 *
 * @example
 * await setTimer(trx, checked.value, POLL_MS);
 */
export async function setTimer(db: Kysely<SchedulerDb>, timer: TimerToSet, wakeWithinMs: number): Promise<boolean> {
  const { rows } = await sql<{ due_soon: boolean }>`
    insert into timers (key, state, due_at, routing_key, message, command_id)
    values (${timer.key}, 'pending', ${timer.dueAt}, ${timer.routingKey}, ${JSON.stringify(timer.message)}::jsonb, ${timer.commandId})
    on conflict (key) do update
      set state = 'pending', due_at = excluded.due_at, routing_key = excluded.routing_key, message = excluded.message,
          command_id = excluded.command_id, updated_at = now()
      where timers.command_id < excluded.command_id
    returning due_at <= now() + make_interval(secs => ${wakeWithinMs / 1000}) as due_soon`.execute(db);
  const row = rows[0];
  if (!row) return false;
  if (row.due_soon) await notifyTimerDue(db);
  return true;
}

/**
 * Cancels `key` unless a newer command is recorded. A cancel for a key never seen (or already pruned)
 * still writes a tombstone, so that the set it overtook cannot arm the timer when it arrives.
 * Returns false for a stale command.
 */
export async function cancelTimer(db: Kysely<SchedulerDb>, key: string, commandId: string): Promise<boolean> {
  const { rows } = await sql`
    insert into timers (key, state, command_id) values (${key}, 'cancelled', ${commandId})
    on conflict (key) do update
      set state = 'cancelled', message = null, command_id = excluded.command_id, updated_at = now()
      where timers.command_id < excluded.command_id
    returning key`.execute(db);
  return rows.length > 0;
}

export type DueTimer = {
  key: string;
  routing_key: string;
  message: MessageEnvelope;
  /** Seconds from due_at to the claim, on the database clock. */
  lag_seconds: number;
};

/**
 * Claims up to `limit` pending timers due now (database clock), earliest first, locking them until the
 * caller's transaction ends. SKIP LOCKED: replicas claim disjoint batches, and a row being rescheduled
 * or cancelled right now is left for the next pass.
 */
export async function claimDueTimers(trx: Kysely<SchedulerDb>, limit: number): Promise<DueTimer[]> {
  const { rows } = await sql<DueTimer>`
    select key, routing_key, message, extract(epoch from clock_timestamp() - due_at)::float8 as lag_seconds
    from timers
    where state = 'pending' and due_at <= now()
    order by due_at
    limit ${limit}
    for update skip locked`.execute(trx);
  return rows;
}

/** Ends claimed timers: `fired` (published), or `failed` (message kept for inspection, not published). */
export async function settleTimers(
  trx: Kysely<SchedulerDb>,
  keys: readonly string[],
  state: 'fired' | 'failed',
): Promise<void> {
  if (keys.length === 0) return;
  const dropMessage = state === 'fired' ? sql`, message = null` : sql``;
  await sql`update timers set state = ${state}, updated_at = now()${dropMessage}
    where key = any(${keys}::text[])`.execute(trx);
}

/** Milliseconds until the earliest pending timer is due (negative when overdue); undefined when none. */
export async function msUntilNextDue(db: Kysely<SchedulerDb>): Promise<number | undefined> {
  const { rows } = await sql<{ ms: number | null }>`
    select (extract(epoch from min(due_at) - now()) * 1000)::float8 as ms
    from timers where state = 'pending'`.execute(db);
  return rows[0]?.ms ?? undefined;
}

export async function countPendingTimers(db: Kysely<SchedulerDb>): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from timers where state = 'pending'`.execute(db);
  return rows[0]?.n ?? 0;
}

/**
 * Deletes up to `limit` tombstones settled more than `olderThanMs` ago; returns how many. Rows are locked
 * (SKIP LOCKED) before deletion so a concurrent set on the same key either waits and then inserts afresh,
 * or wins first and the row is pending, no longer a tombstone.
 */
export async function pruneTombstones(db: Kysely<SchedulerDb>, olderThanMs: number, limit: number): Promise<number> {
  const result = await sql`delete from timers where key in (
      select key from timers
      where state <> 'pending' and updated_at < now() - make_interval(secs => ${olderThanMs / 1000})
      limit ${limit}
      for update skip locked
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** The LISTEN/NOTIFY channel that wakes the firing loops of one schema. */
export function timerDueChannel(schema: string): string {
  return `timers_${schema}`;
}

/** Wakes every replica's firing loop once the caller's transaction commits (nothing on rollback). */
export async function notifyTimerDue(db: Kysely<SchedulerDb>): Promise<void> {
  // current_schema() is the service's schema (search_path), the same name the loops listen on.
  await sql`select pg_notify('timers_' || current_schema(), '')`.execute(db);
}
