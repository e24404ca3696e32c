import { sql, type Kysely } from 'kysely';
import type { ApiRequests, PaginationQuery } from '@postline/contracts';
import { escapeLike, paginate, type Page } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';

/** A kept message as the list shows it: its own row with its email's From and subject. */
export type KeptMessageItem = {
  id: string;
  email_id: string;
  recipients: string[];
  size: number;
  kept_at: Date;
  from_header: string;
  subject: string;
};

/** Keeps one SMTP transaction's message; a copy of the same transaction (a redelivered command) keeps nothing. */
export async function keepMessage(
  db: Kysely<SenderDb>,
  message: { id: string; teamId: string; emailId: string; envelopeFrom: string; recipients: string[]; raw: Buffer },
): Promise<void> {
  await db
    .insertInto('dev_inbox_messages')
    .values({
      id: message.id,
      team_id: message.teamId,
      email_id: message.emailId,
      envelope_from: message.envelopeFrom,
      recipients: message.recipients,
      raw: message.raw,
      size: message.raw.length,
    })
    // The unique index on the email and its recipients: a copy of the same transaction.
    .onConflict((oc) => oc.doNothing())
    .execute();
}

function itemsOf(db: Kysely<SenderDb>, teamId: string) {
  return db
    .selectFrom('dev_inbox_messages as m')
    .innerJoin('emails as e', 'e.id', 'm.email_id')
    .select(['m.id', 'm.email_id', 'm.recipients', 'm.size', 'm.kept_at', 'e.from_header', 'e.subject'])
    .where('m.team_id', '=', teamId);
}

/** A page of a team's kept messages, newest first; `q` matches a part of the subject, From or a recipient. */
export async function pageOfKeptMessages(
  db: Kysely<SenderDb>,
  teamId: string,
  filter: ApiRequests.DevInboxQuery,
  page: PaginationQuery,
): Promise<Page<KeptMessageItem>> {
  let query = itemsOf(db, teamId);
  if (filter.q !== undefined) {
    const pattern = `%${escapeLike(filter.q)}%`;
    query = query.where((eb) =>
      eb.or([
        eb('e.subject', 'ilike', pattern),
        eb('e.from_header', 'ilike', pattern),
        eb(sql<string>`array_to_string(m.recipients, ',')`, 'ilike', pattern),
      ]),
    );
  }
  return paginate(query, page, { idColumn: 'm.id' });
}

export async function findKeptMessage(
  db: Kysely<SenderDb>,
  teamId: string,
  id: string,
): Promise<(KeptMessageItem & { envelope_from: string; raw: Buffer }) | undefined> {
  return itemsOf(db, teamId).select(['m.envelope_from', 'm.raw']).where('m.id', '=', id).executeTakeFirst();
}

export async function countKeptMessages(db: Kysely<SenderDb>, teamId: string): Promise<number> {
  const row = await db
    .selectFrom('dev_inbox_messages')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('team_id', '=', teamId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes the messages kept before `before`, at most `limit` of them; how many went. */
export async function pruneKeptMessages(db: Kysely<SenderDb>, before: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('dev_inbox_messages')
    .where('id', 'in', (eb) =>
      eb.selectFrom('dev_inbox_messages').select('id').where('kept_at', '<', before).limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes one kept message (`id`) or all of the team's; how many went. */
export async function deleteKeptMessages(db: Kysely<SenderDb>, teamId: string, id?: string): Promise<number> {
  let query = db.deleteFrom('dev_inbox_messages').where('team_id', '=', teamId);
  if (id !== undefined) query = query.where('id', '=', id);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
