import { sql, type Kysely } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { SuppressionOrigin } from '@postline/contracts';
import { PREPARED } from '@postline/platform';
import type { EmailRow, RecipientRow, SenderDb, SendingDomainRow } from './schema.ts';

export type LoadedAttempt = {
  email: EmailRow;
  /** The command's recipients still waiting for this attempt, by position. */
  rows: RecipientRow[];
  sending: SendingDomainRow | undefined;
  /** Active suppressions among those recipients: lower-case address → origin. */
  suppressed: Map<string, SuppressionOrigin>;
  hasAttachments: boolean;
};

/**
 * Everything one delivery attempt reads, in one round trip: the email (if it is still queued), its
 * recipients at this attempt, the sending domain's state and the recipients' suppressions.
 */
export async function loadAttempt(
  db: Kysely<SenderDb>,
  q: { teamId: string; emailId: string; positions: number[]; attempt: number; now: Date },
): Promise<LoadedAttempt | undefined> {
  const row = await db
    .selectFrom('emails as e')
    .selectAll('e')
    .select((eb) => [
      jsonArrayFrom(
        eb
          .selectFrom('recipients as r')
          .selectAll('r')
          .whereRef('r.email_id', '=', 'e.id')
          .where(sql<boolean>`r.position = any(${q.positions}::int[])`)
          .where('r.status', 'in', ['pending', 'deferred'])
          .where('r.attempts', '=', q.attempt - 1)
          .orderBy('r.position'),
      ).as('recipient_rows'),
      jsonObjectFrom(eb.selectFrom('sending_domains as d').selectAll('d').whereRef('d.domain_id', '=', 'e.domain_id')).as('sending'),
      jsonArrayFrom(
        eb
          .selectFrom('suppressions as s')
          .select(['s.email', 's.origin'])
          .whereRef('s.team_id', '=', 'e.team_id')
          .where(
            's.email',
            'in',
            eb
              .selectFrom('recipients as r2')
              .select(sql<string>`lower(r2.address)`.as('address'))
              .whereRef('r2.email_id', '=', 'e.id')
              .where(sql<boolean>`r2.position = any(${q.positions}::int[])`),
          )
          .where((w) => w.or([w('s.expires_at', 'is', null), w('s.expires_at', '>', q.now)])),
      ).as('suppressions'),
      sql<boolean>`exists (select 1 from email_attachments a where a.email_id = e.id)`.as('has_attachments'),
    ])
    .where('e.id', '=', q.emailId)
    .where('e.team_id', '=', q.teamId)
    .where('e.status', '=', 'queued')
    .modifyEnd(PREPARED)
    .executeTakeFirst();
  if (!row) return undefined;
  const { recipient_rows: recipientRows, sending, suppressions, has_attachments: hasAttachments, ...email } = row;
  if (recipientRows.length === 0) return undefined;
  return {
    email: { ...email, created_at: new Date(email.created_at), scheduled_at: email.scheduled_at ? new Date(email.scheduled_at) : null },
    // JSON carries timestamps as text.
    rows: recipientRows.map((r) => ({
      ...r,
      first_deferred_at: r.first_deferred_at ? new Date(r.first_deferred_at) : null,
      updated_at: new Date(r.updated_at),
    })),
    sending: sending ? { ...sending, state_at: new Date(sending.state_at) } : undefined,
    suppressed: new Map(suppressions.map((s) => [s.email, s.origin])),
    hasAttachments,
  };
}
