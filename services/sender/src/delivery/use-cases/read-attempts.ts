// Reading what an email's delivery attempts said: each MX address tried, its TLS and SMTP transcript.
import type { Kysely } from 'kysely';
import { getEmail } from '../../emails/index.ts';
import { ATTEMPTS_SHOWN, listAttemptTraces } from '../db/attempts.ts';
import type { SenderDb } from '../../db/schema.ts';

/**
 * The traces of one of the team's emails, oldest first (the first ATTEMPTS_SHOWN, `hasMore` when there are
 * more); 404 for an email the team does not have.
 */
export async function attemptsOf(db: Kysely<SenderDb>, teamId: string, emailId: string | undefined) {
  const email = await getEmail(db, teamId, emailId);
  const rows = await listAttemptTraces(db, teamId, email.id);
  return { attempts: rows.slice(0, ATTEMPTS_SHOWN), hasMore: rows.length > ATTEMPTS_SHOWN };
}
