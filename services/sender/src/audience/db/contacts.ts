// Contacts: one per email per team (case-insensitive through the generated `email_key`).
import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import { DEFAULT_PAGE_SIZE, type PaginationQuery, type Subscription } from '@postline/contracts';
import { escapeLike, paginate, type Page } from '@postline/platform';
import type { ContactFields, ContactKey } from '../domain/contacts.ts';
import type { ContactRow, SenderDb } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** A contact as lists show it. */
export type ContactListRow = Pick<
  ContactRow,
  'id' | 'email' | 'first_name' | 'last_name' | 'created_at' | 'unsubscribed'
>;

const LIST_COLUMNS = ['id', 'email', 'first_name', 'last_name', 'created_at', 'unsubscribed'] as const;

/** The team's contact named by id or by email (without case); row-locked with `forUpdate`. */
export async function findContact(
  db: Db,
  teamId: string,
  key: ContactKey,
  options: { forUpdate?: boolean } = {},
): Promise<ContactRow | undefined> {
  let query = db.selectFrom('contacts').selectAll().where('team_id', '=', teamId);
  query =
    'id' in key ? query.where('id', '=', key.id) : query.where('email_key', '=', sql<string>`lower(${key.email})`);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Creates a contact unless the team has one with this email (any case) already (then undefined). */
export async function insertContact(
  db: Db,
  contact: ContactFields & { id: string; teamId: string; now: Date },
): Promise<ContactRow | undefined> {
  return db
    .insertInto('contacts')
    .values({
      id: contact.id,
      team_id: contact.teamId,
      email: contact.email,
      first_name: contact.first_name,
      last_name: contact.last_name,
      unsubscribed: contact.unsubscribed,
      properties: JSON.stringify(contact.properties),
      created_at: contact.now,
      updated_at: contact.now,
    })
    .onConflict((oc) => oc.columns(['team_id', 'email_key']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Writes a contact's fields. A new email another contact of the team has fails with a unique violation. */
export async function updateContactFields(
  db: Db,
  teamId: string,
  id: string,
  fields: ContactFields,
  now: Date,
): Promise<ContactRow> {
  return db
    .updateTable('contacts')
    .set({
      email: fields.email,
      first_name: fields.first_name,
      last_name: fields.last_name,
      unsubscribed: fields.unsubscribed,
      properties: JSON.stringify(fields.properties),
      updated_at: now,
    })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Marks a contact changed by a change to its segments or topics; returns it as it is now. */
export async function touchContact(db: Db, teamId: string, id: string, now: Date): Promise<ContactRow> {
  return db
    .updateTable('contacts')
    .set({ updated_at: now })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a contact (its memberships and topic choices go with it); returns it as it was. */
export async function deleteContact(db: Db, teamId: string, id: string): Promise<ContactRow | undefined> {
  return db.deleteFrom('contacts').where('team_id', '=', teamId).where('id', '=', id).returningAll().executeTakeFirst();
}

/** What a contacts list keeps: a part of the email or name (`q`), unsubscribed or not. */
/**
 * `topic`: only the contacts whose subscription to the topic (their own choice, else the topic's default)
 * is `subscription`.
 */
export type ContactFilter = {
  q?: string | undefined;
  unsubscribed?: boolean | undefined;
  topic?: TopicFilter | undefined;
};
export type TopicFilter = { id: string; subscription: Subscription; defaultSubscription: Subscription };

/**
 * The topic filter on the contact aliased `table`. A contact holds the topic's default unless a choice row
 * says otherwise, so the wanted default is the absence of the other choice, and the other value is a row.
 */
function topicCondition(table: string, topic: TopicFilter) {
  const contactId = sql.ref(`${table}.id`);
  return topic.subscription === topic.defaultSubscription
    ? sql<boolean>`not exists (select 1 from contact_topics ct where ct.contact_id = ${contactId}
        and ct.topic_id = ${topic.id} and ct.subscription <> ${topic.subscription})`
    : sql<boolean>`exists (select 1 from contact_topics ct where ct.contact_id = ${contactId}
        and ct.topic_id = ${topic.id} and ct.subscription = ${topic.subscription})`;
}

/** The text `q` searches: the expression of the trigram index contacts_search_trgm_idx (its migration). */
const contactSearchText = (table: string) =>
  sql<string>`lower(${sql.ref(`${table}.email`)} || ' ' || coalesce(${sql.ref(`${table}.first_name`)}, '') || ' ' || coalesce(${sql.ref(`${table}.last_name`)}, ''))`;

/** The list's filter besides a search (searchContacts' own). */
function filtered<QB extends SelectQueryBuilder<SenderDb, 'contacts', object>>(qb: QB, filter: ContactFilter): QB {
  let q = qb;
  if (filter.unsubscribed !== undefined) q = q.where('contacts.unsubscribed', '=', filter.unsubscribed) as QB;
  if (filter.topic) q = q.where(topicCondition('contacts', filter.topic)) as QB;
  return q;
}

/**
 * A page of the team's contacts, newest first: a backward scan of `contacts_team_id` (team_id, id), which
 * stops at a page whatever the team's size. A search is searchContacts'; a topic's choice other than its
 * default, listTopicChoiceContacts'.
 */
export async function listContacts(
  db: Db,
  teamId: string,
  page: PaginationQuery,
  filter: ContactFilter = {},
  opts: SearchOptions = {},
): Promise<Page<ContactListRow>> {
  if (filter.q) return searchContacts(db, teamId, undefined, { ...filter, q: filter.q }, page, opts);
  if (isRareChoice(filter.topic)) return listTopicChoiceContacts(db, teamId, undefined, filter.topic, filter, page);
  return paginate(filtered(db.selectFrom('contacts').select(LIST_COLUMNS).where('team_id', '=', teamId), filter), page);
}

/**
 * A page of a segment's contacts, newest first: a backward scan of `contact_segments`' primary key
 * (segment_id, contact_id) from the cursor, each contact fetched by its id. The lateral `limit 1` keeps that
 * a nested loop: as a plain join the planner may merge-join along `contacts_team_id`, which past a cursor
 * deep in a large team reads every newer contact of the team first.
 */
export async function listSegmentContacts(
  db: Db,
  teamId: string,
  segmentId: string,
  page: PaginationQuery,
  filter: ContactFilter = {},
  opts: SearchOptions = {},
): Promise<Page<ContactListRow>> {
  if (filter.q) return searchContacts(db, teamId, segmentId, { ...filter, q: filter.q }, page, opts);
  if (isRareChoice(filter.topic)) return listTopicChoiceContacts(db, teamId, segmentId, filter.topic, filter, page);
  const query = db
    .selectFrom('contact_segments')
    .innerJoinLateral(
      (eb) =>
        filtered(
          eb
            .selectFrom('contacts')
            .select(LIST_COLUMNS)
            .whereRef('contacts.id', '=', 'contact_segments.contact_id')
            .where('contacts.team_id', '=', teamId),
          filter,
        )
          .limit(1)
          .as('contact'),
      (join) => join.onTrue(),
    )
    .select(LIST_COLUMNS.map((column) => `contact.${column}` as const))
    .where('contact_segments.segment_id', '=', segmentId);
  return paginate(query, page, { idColumn: 'contact_segments.contact_id' });
}

/** A topic filter asking for the choice other than the topic's default: contacts with a choice row. */
function isRareChoice(topic: TopicFilter | undefined): topic is TopicFilter {
  return topic !== undefined && topic.subscription !== topic.defaultSubscription;
}

/**
 * A page of the contacts (of a segment, or the team's) that made a topic's other-than-default choice, newest
 * first: the page's ids are read first from the choices' index (`contact_topics_topic`: topic_id,
 * contact_id), a few of a million, and only then is each contact fetched by its key. As one join the
 * planner, short of statistics, may fetch every chooser's contact before sorting them.
 */
async function listTopicChoiceContacts(
  db: Db,
  teamId: string,
  segmentId: string | undefined,
  topic: TopicFilter,
  filter: ContactFilter,
  page: PaginationQuery,
): Promise<Page<ContactListRow>> {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const ascending = page.before !== undefined;
  const cursor = page.before ?? page.after;
  const order = ascending ? sql`asc` : sql`desc`;
  const past =
    cursor === undefined ? sql`` : ascending ? sql`and ct.contact_id > ${cursor}` : sql`and ct.contact_id < ${cursor}`;
  const inSegment = segmentId
    ? sql`and exists (select 1 from contact_segments cs where cs.segment_id = ${segmentId} and cs.contact_id = ct.contact_id)`
    : sql``;
  const unsubscribed =
    filter.unsubscribed === undefined
      ? sql``
      : sql`and exists (select 1 from contacts u where u.id = ct.contact_id and u.unsubscribed = ${filter.unsubscribed})`;
  const columns = sql.join(LIST_COLUMNS.map((column) => sql.ref(`c.${column}`)));
  const { rows } = await sql<ContactListRow>`
    select ${columns} from (
      select ct.contact_id from contact_topics ct
      where ct.topic_id = ${topic.id} and ct.team_id = ${teamId} and ct.subscription = ${topic.subscription}
        ${past} ${inSegment} ${unsubscribed}
      order by ct.contact_id ${order} limit ${limit + 1}) t
    cross join lateral (select ${columns} from contacts c where c.id = t.contact_id and c.team_id = ${teamId} limit 1) c
    order by t.contact_id ${order}`.execute(db);
  const hasMore = rows.length > limit;
  const data = rows.slice(0, limit);
  if (ascending) data.reverse();
  return { object: 'list', has_more: hasMore, data };
}

/** How many of the newest contacts (or segment members) past the cursor a search reads in order first. */
export const SEARCH_SCAN = 2_000;

/** `scan`: SEARCH_SCAN unless given (a test's smaller window). */
export type SearchOptions = { scan?: number };

/**
 * A page of the contacts (of a segment, or the team's) whose email or name holds `q`, newest first, in two
 * steps so that it stays fast whether `q` matches most contacts or a few of a million. First the newest
 * SEARCH_SCAN contacts past the cursor are read in order and filtered: a common `q` fills the page there.
 * If it does not and there are older contacts, the rest of the page comes from the trigram index
 * (contacts_search_trgm_idx), whose matches are materialized first, so that the planner cannot walk the
 * whole team in order instead: a `q` that found under a page in SEARCH_SCAN contacts matches few.
 */
async function searchContacts(
  db: Db,
  teamId: string,
  segmentId: string | undefined,
  filter: ContactFilter & { q: string },
  page: PaginationQuery,
  opts: SearchOptions,
): Promise<Page<ContactListRow>> {
  const scan = opts.scan ?? SEARCH_SCAN;
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const ascending = page.before !== undefined;
  const cursor = page.before ?? page.after;
  const cmp = (column: string, bound: string | undefined) =>
    bound === undefined
      ? sql`true`
      : ascending
        ? sql`${sql.ref(column)} > ${bound}`
        : sql`${sql.ref(column)} < ${bound}`;
  const order = ascending ? sql`asc` : sql`desc`;
  const pattern = `%${escapeLike(filter.q.toLowerCase())}%`;
  const kept = sql`${contactSearchText('c')} like ${pattern}${
    filter.unsubscribed === undefined ? sql`` : sql` and c.unsubscribed = ${filter.unsubscribed}`
  }${filter.topic ? sql` and ${topicCondition('c', filter.topic)}` : sql``}`;
  const columns = sql.join(LIST_COLUMNS.map((column) => sql.ref(`c.${column}`)));
  // The window: the newest `scan` ids past the cursor, in order, read from an index that stops there.
  const window = (size: number, offset = 0) =>
    segmentId
      ? sql`select contact_id as id from contact_segments where segment_id = ${segmentId}
          and ${cmp('contact_id', cursor)} order by contact_id ${order} offset ${offset} limit ${size}`
      : sql`select id from contacts where team_id = ${teamId} and ${cmp('id', cursor)}
          order by id ${order} offset ${offset} limit ${size}`;
  // Each id of the window looked up by its key. The lateral's `limit 1` keeps it a nested loop: pulled up
  // into a join, the planner may read every match of the trigram index and sort them.
  const first = await sql<ContactListRow>`
    select ${columns} from (${window(scan)}) w
      cross join lateral (select ${columns} from contacts c
        where c.id = w.id and c.team_id = ${teamId} and ${kept} limit 1) c
    order by w.id ${order} limit ${limit + 1}`.execute(db);
  let rows = first.rows;
  if (rows.length <= limit) {
    // The window's last id, if the window was full: older contacts may match too.
    const edge = await sql<{ id: string }>`${window(1, scan - 1)}`.execute(db);
    const last = edge.rows[0]?.id;
    if (last !== undefined) {
      // Older than the window: from the index's matches, found without the team's condition so that the
      // trigram index is the one way to them (with it the planner may walk the whole team instead).
      const inSegment = segmentId
        ? sql`and exists (select 1 from contact_segments cs where cs.segment_id = ${segmentId} and cs.contact_id = c.id)`
        : sql``;
      const more = await sql<ContactListRow>`
        with found as materialized (select c.id, c.team_id from contacts c where ${kept})
        select ${columns} from found f join lateral (select * from contacts c where c.id = f.id) c on true
        where f.team_id = ${teamId} and ${cmp('f.id', last)} ${inSegment}
        order by c.id ${order} limit ${limit + 1 - rows.length}`.execute(db);
      rows = [...rows, ...more.rows];
    }
  }
  const hasMore = rows.length > limit;
  const data = rows.slice(0, limit);
  if (ascending) data.reverse();
  return { object: 'list', has_more: hasMore, data };
}
