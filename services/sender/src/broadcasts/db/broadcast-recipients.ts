// The contacts a broadcast goes to: the fan-out's page read, the rows that record who got it, the
// recipients list, and canceling what was not handed to the MTA yet.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { BounceType, PaginationQuery, Subscription } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** A contact of a fan-out page, with whether its address is on the team's suppression list. */
export type FanOutContact = {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  properties: Record<string, string | number | null>;
  suppressed: boolean;
  /** Why the address is on the suppression list (null: added by hand, or not listed). */
  suppressed_origin: 'bounce' | 'complaint' | 'manual' | null;
};

/** The topic a broadcast is sent under, and the subscription of a contact who made no choice. */
export type BroadcastTopic = { id: string; defaultSubscription: Subscription };

const NO_CONTACT = '00000000-0000-0000-0000-000000000000';

/**
 * The next `limit` contacts of the segment after contact id `after` (keyset on the membership's primary
 * key), leaving out unsubscribed contacts and, under a topic, those whose effective subscription is
 * `opt_out`. Ordered by contact id: the last one is where the next page starts.
 */
export async function findFanOutPage(
  trx: Transaction<SenderDb>,
  page: {
    teamId: string;
    segmentId: string;
    topic: BroadcastTopic | null;
    after: string | null;
    limit: number;
    now: Date;
  },
): Promise<FanOutContact[]> {
  const { topic } = page;
  const topicFilter = topic
    ? sql`and coalesce((select ct.subscription from contact_topics ct where ct.contact_id = c.id and ct.topic_id = ${topic.id}::uuid),
        ${topic.defaultSubscription}) = 'opt_in'`
    : sql``;
  const { rows } = await sql<FanOutContact>`select c.id, c.email, c.first_name, c.last_name, c.properties,
      s.origin is not null as suppressed, s.origin as suppressed_origin
    from contact_segments m join contacts c on c.id = m.contact_id
      left join lateral (select s.origin from suppressions s where s.team_id = c.team_id and s.email = c.email_key
        and (s.expires_at is null or s.expires_at > ${page.now}) limit 1) s on true
    where m.segment_id = ${page.segmentId}::uuid and m.contact_id > ${page.after ?? NO_CONTACT}::uuid
      and c.team_id = ${page.teamId}::uuid and not c.unsubscribed ${topicFilter}
    order by m.contact_id
    limit ${page.limit}`.execute(trx);
  return rows;
}

export type BroadcastRecipientRow = {
  id: string;
  broadcast_id: string;
  contact_id: string;
  team_id: string;
  email: string;
  email_id: string | null;
};

/**
 * Records the contacts a page reached. A plain insert: a contact already recorded for the broadcast is a
 * unique violation that rolls the page back, so no contact ever gets a broadcast twice.
 */
export async function insertBroadcastRecipients(
  trx: Transaction<SenderDb>,
  rows: readonly BroadcastRecipientRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`insert into broadcast_recipients (id, broadcast_id, contact_id, team_id, email, email_id)
    select * from unnest(${rows.map((row) => row.id)}::uuid[], ${rows.map((row) => row.broadcast_id)}::uuid[],
      ${rows.map((row) => row.contact_id)}::uuid[], ${rows.map((row) => row.team_id)}::uuid[],
      ${rows.map((row) => row.email)}::text[], ${rows.map((row) => row.email_id)}::uuid[])`.execute(trx);
}

export type RecipientListType =
  | 'sent'
  | 'delivered'
  | 'opened'
  | 'clicked'
  | 'bounced'
  | 'complained'
  | 'unsubscribed'
  | 'suppressed';

export type RecipientListItem = {
  id: string;
  contact_id: string;
  email: string;
  bounce_type: BounceType | null;
  email_id: string | null;
};

/**
 * A page of a broadcast's recipients of one kind (`type`), newest first on the row's id. sent: an email
 * was made; delivered, bounced, complained: its recipient's state; suppressed: left out by the suppression
 * list at the fan-out or at delivery; unsubscribed: the contact has since unsubscribed (from everything,
 * or from the broadcast's topic); opened, clicked: its email has at least one open or click recorded
 * (machine opens and scanner clicks included, as the events are).
 */
export async function listBroadcastRecipients(
  db: Db,
  broadcast: { id: string; topicId: string | null },
  filter: { type: RecipientListType; email: string | undefined; bounceType: BounceType | undefined },
  query: PaginationQuery,
): Promise<Page<RecipientListItem>> {
  let q = db
    .selectFrom('broadcast_recipients as br')
    .leftJoin('recipients as r', (join) => join.onRef('r.email_id', '=', 'br.email_id').on('r.position', '=', 0))
    .select(['br.id', 'br.contact_id', 'br.email', 'r.bounce_type', 'br.email_id'])
    .where('br.broadcast_id', '=', broadcast.id);
  if (filter.email !== undefined) q = q.where(sql<boolean>`lower(br.email) = ${filter.email.toLowerCase()}`);
  switch (filter.type) {
    case 'sent':
      q = q.where('br.email_id', 'is not', null);
      break;
    case 'delivered':
    case 'complained':
      q = q.where('r.status', '=', filter.type);
      break;
    case 'bounced':
      q = q.where('r.status', '=', 'bounced');
      if (filter.bounceType) q = q.where('r.bounce_type', '=', filter.bounceType);
      break;
    case 'suppressed':
      q = q.where((eb) => eb.or([eb('br.email_id', 'is', null), eb('r.status', '=', 'suppressed')]));
      break;
    case 'unsubscribed': {
      const topicId = broadcast.topicId;
      q = q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('contacts as c')
            .select(sql`1`.as('one'))
            .whereRef('c.id', '=', 'br.contact_id')
            .where((inner) =>
              topicId === null
                ? inner('c.unsubscribed', '=', true)
                : inner.or([
                    inner('c.unsubscribed', '=', true),
                    inner.exists(
                      inner
                        .selectFrom('contact_topics as ct')
                        .select(sql`1`.as('one'))
                        .whereRef('ct.contact_id', '=', 'c.id')
                        .where('ct.topic_id', '=', topicId)
                        .where('ct.subscription', '=', 'opt_out'),
                    ),
                  ]),
            ),
        ),
      );
      break;
    }
    case 'opened':
    case 'clicked': {
      const kind = filter.type === 'opened' ? 'open' : 'click';
      q = q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('email_engagements as e')
            .select(sql`1`.as('one'))
            .whereRef('e.email_id', '=', 'br.email_id')
            .where('e.kind', '=', kind),
        ),
      );
      break;
    }
  }
  return paginate(q, query, { idColumn: 'br.id' });
}

/**
 * Cancels the broadcast's emails whose recipient is still pending (not handed to the MTA): the recipient
 * `canceled`, which the delivery attempt skips, and its email canceled. Returns how many.
 */
export async function cancelPendingBroadcastEmails(
  trx: Transaction<SenderDb>,
  broadcastId: string,
  now: Date,
): Promise<number> {
  const { rows } = await sql<{ canceled: string }>`with r as (
      update recipients set status = 'canceled', updated_at = ${now}
      where email_id in (select email_id from broadcast_recipients where broadcast_id = ${broadcastId}::uuid and email_id is not null)
        and status in ('pending', 'deferred')
      returning email_id),
    e as (update emails set status = 'canceled', last_event = 'canceled' where id in (select email_id from r))
    select count(*) as canceled from r`.execute(trx);
  return Number(rows[0]?.canceled ?? 0);
}

/** How many opens or clicks each email had, and for clicks the distinct URLs clicked (first click first). */
export type EngagementSummary = { count: number; links: string[] };

export async function findEngagementSummaries(
  db: Db,
  emailIds: readonly string[],
  kind: 'open' | 'click',
): Promise<Map<string, EngagementSummary>> {
  if (emailIds.length === 0) return new Map();
  const { rows } = await sql<{ email_id: string; count: string; links: (string | null)[] }>`select email_id,
      count(*) as count,
      array(select link from email_engagements l where l.email_id = e.email_id and l.kind = ${kind}
        group by link order by min(created_at)) as links
    from email_engagements e
    where email_id = any(${[...emailIds]}::uuid[]) and kind = ${kind}
    group by email_id`.execute(db);
  return new Map(
    rows.map((row) => [
      row.email_id,
      { count: Number(row.count), links: row.links.filter((link): link is string => link !== null) },
    ]),
  );
}
