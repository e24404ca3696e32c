// Contacts: one per email per team (case-insensitive through the generated `email_key`).
import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
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

/** A page of the team's contacts, newest first: a backward scan of `contacts_team_id` (team_id, id). */
/** What a contacts list keeps: a part of the email or name (`q`), unsubscribed or not. */
export type ContactFilter = { q?: string | undefined; unsubscribed?: boolean | undefined };

/** The text `q` searches: the expression of the trigram index contacts_search_trgm_idx (its migration). */
const contactSearchText = (table: string) =>
  sql<string>`lower(${sql.ref(`${table}.email`)} || ' ' || coalesce(${sql.ref(`${table}.first_name`)}, '') || ' ' || coalesce(${sql.ref(`${table}.last_name`)}, ''))`;

function filtered<QB extends SelectQueryBuilder<SenderDb, 'contacts', object>>(qb: QB, filter: ContactFilter): QB {
  let q = qb;
  if (filter.q) q = q.where(contactSearchText('contacts'), 'like', `%${escapeLike(filter.q.toLowerCase())}%`) as QB;
  if (filter.unsubscribed !== undefined) q = q.where('contacts.unsubscribed', '=', filter.unsubscribed) as QB;
  return q;
}

export async function listContacts(
  db: Db,
  teamId: string,
  page: PaginationQuery,
  filter: ContactFilter = {},
): Promise<Page<ContactListRow>> {
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
): Promise<Page<ContactListRow>> {
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
