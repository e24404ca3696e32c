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
  const { rows } = await sql<FanOutContact>`select c.id, c.email, c.first_name, c.last_name, c.properties,
      s.origin is not null as suppressed, s.origin as suppressed_origin
    from ${audienceOf(page)}
      and m.contact_id > ${page.after ?? NO_CONTACT}::uuid
    order by m.contact_id
    limit ${page.limit}`.execute(trx);
  return rows;
}

/**
 * How many contacts a fan-out would reach now (the same contacts as findFanOutPage's pages together), and
 * how many of them are on the suppression list (they get no email).
 */
export async function countAudience(
  db: Db,
  audience: { teamId: string; segmentId: string; topic: BroadcastTopic | null; now: Date },
): Promise<{ recipients: number; suppressed: number }> {
  const { rows } = await sql<{ total: string; suppressed: string }>`select count(*) as total,
      count(*) filter (where s.origin is not null) as suppressed
    from ${audienceOf(audience)}`.execute(db);
  const total = Number(rows[0]?.total ?? 0);
  const suppressed = Number(rows[0]?.suppressed ?? 0);
  return { recipients: total - suppressed, suppressed };
}

/**
 * The segment's contacts a broadcast goes to, each with its suppression (`s.origin`, null when not listed):
 * the unsubscribed left out and, under a topic, those whose effective subscription is `opt_out`. The `from`
 * of a statement, ending in its `where`, which the caller may extend with `and`.
 */
function audienceOf(audience: { teamId: string; segmentId: string; topic: BroadcastTopic | null; now: Date }) {
  const { topic } = audience;
  const topicFilter = topic
    ? sql`and coalesce((select ct.subscription from contact_topics ct where ct.contact_id = c.id and ct.topic_id = ${topic.id}::uuid),
        ${topic.defaultSubscription}) = 'opt_in'`
    : sql``;
  return sql`contact_segments m join contacts c on c.id = m.contact_id
      left join lateral (select s.origin from suppressions s where s.team_id = c.team_id and s.email = c.email_key
        and (s.expires_at is null or s.expires_at > ${audience.now}) limit 1) s on true
    where m.segment_id = ${audience.segmentId}::uuid and c.team_id = ${audience.teamId}::uuid
      and not c.unsubscribed ${topicFilter}`;
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

/** A broadcast's outcome so far, each a number of its recipients (see broadcastResults). */
export type BroadcastResultCounts = {
  sent: number;
  delivered: number;
  opened_by_people: number;
  opened_by_machines: number;
  clicked_by_people: number;
  clicked_by_scanners: number;
  unsubscribed: number;
  bounced: number;
  complained: number;
  suppressed: number;
};

/**
 * Counts of a broadcast's recipients by outcome, read from its recipients as the recipients list reads them
 * (so a count and its list agree): sent, delivered, bounced, complained, suppressed and unsubscribed as
 * there. An email opened by a person counts once in opened_by_people; one opened only by machines (privacy
 * proxies, prefetchers) in opened_by_machines; clicks likewise with scanners.
 */
export async function broadcastResults(
  db: Db,
  broadcast: { id: string; topicId: string | null },
): Promise<BroadcastResultCounts> {
  const topicOptOut = broadcast.topicId
    ? sql`or exists (select 1 from contact_topics ct where ct.contact_id = c.id and ct.topic_id = ${broadcast.topicId}::uuid
        and ct.subscription = 'opt_out')`
    : sql``;
  const { rows } = await sql<Record<keyof BroadcastResultCounts, string>>`select
      count(br.email_id) as sent,
      count(*) filter (where r.status = 'delivered') as delivered,
      count(*) filter (where e.people_opens > 0) as opened_by_people,
      count(*) filter (where e.people_opens = 0 and e.machine_opens > 0) as opened_by_machines,
      count(*) filter (where e.people_clicks > 0) as clicked_by_people,
      count(*) filter (where e.people_clicks = 0 and e.scanner_clicks > 0) as clicked_by_scanners,
      count(*) filter (where c.unsubscribed ${topicOptOut}) as unsubscribed,
      count(*) filter (where r.status = 'bounced') as bounced,
      count(*) filter (where r.status = 'complained') as complained,
      count(*) filter (where br.email_id is null or r.status = 'suppressed') as suppressed
    from broadcast_recipients br
      left join recipients r on r.email_id = br.email_id and r.position = 0
      left join contacts c on c.id = br.contact_id
      left join lateral (select
          count(*) filter (where x.kind = 'open' and not x.machine) as people_opens,
          count(*) filter (where x.kind = 'open' and x.machine) as machine_opens,
          count(*) filter (where x.kind = 'click' and not x.machine) as people_clicks,
          count(*) filter (where x.kind = 'click' and x.machine) as scanner_clicks
        from email_engagements x where x.email_id = br.email_id) e on true
    where br.broadcast_id = ${broadcast.id}::uuid`.execute(db);
  const row = rows[0];
  const n = (key: keyof BroadcastResultCounts) => Number(row?.[key] ?? 0);
  return {
    sent: n('sent'),
    delivered: n('delivered'),
    opened_by_people: n('opened_by_people'),
    opened_by_machines: n('opened_by_machines'),
    clicked_by_people: n('clicked_by_people'),
    clicked_by_scanners: n('clicked_by_scanners'),
    unsubscribed: n('unsubscribed'),
    bounced: n('bounced'),
    complained: n('complained'),
    suppressed: n('suppressed'),
  };
}
