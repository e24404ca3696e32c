// Opens and clicks of sent emails (email_engagements), and the reads that recording them and serving the
// tracking links make.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { EmailEngagementsTable, EmailRow, SenderDb } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** The team of an email, or undefined when there is none of that id (the tracking routes' one read). */
export async function findEmailTeam(db: Db, emailId: string): Promise<string | undefined> {
  const row = await db.selectFrom('emails').select('team_id').where('id', '=', emailId).executeTakeFirst();
  return row?.team_id;
}

/** The emails of these ids, of any team (the caller checks each against the team it expected). */
export async function findEmailsByIds(trx: Transaction<SenderDb>, ids: readonly string[]): Promise<EmailRow[]> {
  if (ids.length === 0) return [];
  return trx.selectFrom('emails').selectAll().where('id', 'in', ids).execute();
}

/**
 * When each email was first delivered: the earliest time one of its recipients reached `delivered` (the
 * attempt that delivered it sets its updated_at, and a delivered recipient changes no more unless feedback
 * arrives later). Emails with no delivered recipient are absent.
 */
export async function findDeliveredTimes(
  trx: Transaction<SenderDb>,
  ids: readonly string[],
): Promise<Map<string, Date>> {
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('recipients')
    .select(['email_id', sql<Date>`min(updated_at)`.as('delivered_at')])
    .where('email_id', 'in', ids)
    .where('status', '=', 'delivered')
    .groupBy('email_id')
    .execute();
  return new Map(rows.map((row) => [row.email_id, row.delivered_at]));
}

export async function insertEngagements(
  trx: Transaction<SenderDb>,
  rows: readonly EmailEngagementsTable[],
): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('email_engagements')
    .values([...rows])
    .execute();
}

/**
 * The sending domain and the recipient's mailbox provider of the email a broadcast sent to a contact, which
 * its unsubscribe is counted against; undefined when no email was made (the address was suppressed).
 */
export async function broadcastEmailOf(
  db: Db,
  teamId: string,
  broadcastId: string,
  contactId: string,
): Promise<{ domainId: string; provider: string | null } | undefined> {
  const { rows } = await sql<{ domain_id: string; provider: string | null }>`select e.domain_id, r.provider
    from broadcast_recipients br
      join emails e on e.id = br.email_id
      left join recipients r on r.email_id = e.id and r.position = 0
    where br.broadcast_id = ${broadcastId}::uuid and br.contact_id = ${contactId}::uuid
      and br.team_id = ${teamId}::uuid`.execute(db);
  const row = rows[0];
  return row && { domainId: row.domain_id, provider: row.provider };
}

/** A broadcast's clicked links: clicks and distinct recipients' emails that clicked each URL. */
export type ClickedLink = { url: string; clicks: number; unique_clicks: number };

/** The clicked links of the emails of a broadcast, most clicked first. */
export async function listClickedLinks(db: Db, teamId: string, broadcastId: string): Promise<ClickedLink[]> {
  const { rows } = await sql<{ url: string; clicks: string; unique_clicks: string }>`select e.link as url,
      count(*) as clicks, count(distinct e.email_id) as unique_clicks
    from broadcast_recipients br join email_engagements e on e.email_id = br.email_id and e.kind = 'click'
    where br.broadcast_id = ${broadcastId}::uuid and br.team_id = ${teamId}::uuid and br.email_id is not null
    group by e.link
    order by count(*) desc, e.link`.execute(db);
  return rows.map((row) => ({ url: row.url, clicks: Number(row.clicks), unique_clicks: Number(row.unique_clicks) }));
}
