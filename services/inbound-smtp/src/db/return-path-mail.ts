// The mail received at return-path domains, and the read of a team's return paths that checks the VERP
// address found inside a report.
import { sql, type Transaction } from 'kysely';
import { PREPARED } from '@postline/platform';
import type { ReturnPathOutcome } from '../domain/return-path-report.ts';
import type { InboundDb } from './schema.ts';
import type { ReturnPathMailRow } from './return-path-tables.ts';

/**
 * Writes a message's row unless one for the same message and RCPT is there; true when written. A
 * concurrent writer of the same pair waits for the first one's commit, then writes nothing.
 */
export async function insertReturnPathMail(trx: Transaction<InboundDb>, row: ReturnPathMailRow): Promise<boolean> {
  const inserted = await trx
    .insertInto('return_path_mail')
    .values(row)
    .onConflict((oc) => oc.columns(['message_sha256', 'recipient']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** The outcome recorded for a message and RCPT, or undefined. */
export async function findReturnPathOutcome(
  trx: Transaction<InboundDb>,
  messageSha256: Buffer,
  recipient: string,
): Promise<ReturnPathOutcome | undefined> {
  const { rows } = await sql<{ outcome: ReturnPathOutcome }>`select ${PREPARED} outcome from return_path_mail
    where message_sha256 = ${messageSha256} and recipient = ${recipient}`.execute(trx);
  return rows[0]?.outcome;
}

/** Whether `host` (lower-case) is the return path of one of a team's live domains. */
export async function isTeamReturnPath(trx: Transaction<InboundDb>, teamId: string, host: string): Promise<boolean> {
  const { rows } = await sql<{ found: number }>`select ${PREPARED} 1 as found from receiving_domains
    where return_path = ${host} and team_id = ${teamId} and not deleted limit 1`.execute(trx);
  return rows.length > 0;
}
