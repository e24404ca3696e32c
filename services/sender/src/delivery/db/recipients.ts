import { sql, type Kysely, type Transaction } from 'kysely';
import type { BounceSubType } from '@postline/contracts';
import type { RecipientTransition } from '../domain/attempt-record.ts';
import type { SenderDb } from '../../db/schema.ts';

/**
 * New recipient states, one array per column: unnest, unlike a JSON record set, lets the planner count the
 * rows (see updateRecipientStates).
 */
export type RecipientStateColumns = {
  email_id: string[];
  position: number[];
  attempt: number[];
  status: string[];
  code: (number | null)[];
  response: (string | null)[];
  bounce_type: (string | null)[];
  bounce_sub_type: (string | null)[];
  first_deferred_at: (string | null)[];
  provider: (string | null)[];
};

export function recipientStateColumns(): RecipientStateColumns {
  return {
    email_id: [],
    position: [],
    attempt: [],
    status: [],
    code: [],
    response: [],
    bounce_type: [],
    bounce_sub_type: [],
    first_deferred_at: [],
    provider: [],
  };
}

/** Adds the new state of the recipient at `transition` of email `emailId`'s attempt `attempt`. */
export function addRecipientState(
  columns: RecipientStateColumns,
  emailId: string,
  attempt: number,
  transition: RecipientTransition,
  provider: string | null,
): void {
  const { result } = transition;
  columns.email_id.push(emailId);
  columns.position.push(transition.recipient.position);
  columns.attempt.push(attempt);
  columns.status.push(transition.status);
  columns.code.push('code' in result ? result.code : null);
  columns.response.push('response' in result ? result.response.slice(0, 1000) : null);
  columns.bounce_type.push(transition.bounceType);
  columns.bounce_sub_type.push(transition.bounceSubType);
  columns.first_deferred_at.push(transition.firstDeferredAt?.toISOString() ?? null);
  columns.provider.push(provider);
}

/**
 * Writes the new states in one statement, each only where its recipient is still waiting for that attempt,
 * and returns the recipients it wrote (with the attempt now counted).
 *
 * Every recipient must be one probe of the primary key, whatever the table's statistics (there are none
 * where autovacuum is off). Not PREPARED, so planned for its parameters on every call: a generic plan made
 * while the table was young would keep scanning it (see PREPARED). unnest is counted exactly, so a handful
 * of rows probes the key; a JSON record set counts as 100 rows, and against a table of some 30,000
 * recipients that made a scan of the whole table look cheaper. An added `email_id = any(ids)` made it
 * worse: without statistics each id of a composite key is taken to match 0.5% of the rows.
 */
export async function updateRecipientStates(
  trx: Transaction<SenderDb>,
  columns: RecipientStateColumns,
  now: Date,
): Promise<{ email_id: string; position: number; attempts: number }[]> {
  const { rows } = await sql<{ email_id: string; position: number; attempts: number }>`
    update recipients as r set status = incoming.status, attempts = incoming.attempt, last_code = incoming.code,
      last_response = incoming.response, bounce_type = incoming.bounce_type, bounce_sub_type = incoming.bounce_sub_type,
      first_deferred_at = incoming.first_deferred_at, provider = coalesce(incoming.provider, r.provider),
      updated_at = ${now}
    from unnest(${columns.email_id}::uuid[], ${columns.position}::int[], ${columns.attempt}::int[], ${columns.status}::text[],
      ${columns.code}::int[], ${columns.response}::text[], ${columns.bounce_type}::text[], ${columns.bounce_sub_type}::text[],
      ${columns.first_deferred_at}::timestamptz[], ${columns.provider}::text[])
      as incoming (email_id, position, attempt, status, code, response, bounce_type, bounce_sub_type, first_deferred_at, provider)
    where r.email_id = incoming.email_id and r.position = incoming.position and r.attempts = incoming.attempt - 1
      and r.status in ('pending', 'deferred')
    returning r.email_id, r.position, r.attempts`.execute(trx);
  return rows;
}

/**
 * How many transient bounces of `subTypes` each of `addresses` had in the team since `since`, by lower-case
 * address: addresses compare without case, as the suppression list does (Foo@ and foo@ are one mailbox to
 * it). Addresses without any are left out.
 */
export async function countRecentBounces(
  trx: Transaction<SenderDb>,
  teamId: string,
  addresses: readonly string[],
  opts: { since: Date; subTypes: readonly BounceSubType[] },
): Promise<{ address: string; bounces: number }[]> {
  const lower = sql<string>`lower(address)`;
  const counts = await trx
    .selectFrom('recipients')
    .select([lower.as('address'), (eb) => eb.fn.countAll<string>().as('bounces')])
    .where('team_id', '=', teamId)
    .where('bounce_type', '=', 'Transient')
    .where('bounce_sub_type', 'in', opts.subTypes)
    .where(
      lower,
      'in',
      addresses.map((a) => a.toLowerCase()),
    )
    .where('updated_at', '>=', opts.since)
    .groupBy(lower)
    .execute();
  return counts.map((count) => ({ address: count.address, bounces: Number(count.bounces) }));
}

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
