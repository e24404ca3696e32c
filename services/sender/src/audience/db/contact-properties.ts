// A team's contact properties: the keys and types a contact's property values must match.
import type { Kysely, Transaction } from 'kysely';
import type { PaginationQuery, PropertyType } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import type { PropertyDefinition, PropertyValue } from '../domain/contacts.ts';
import type { ContactPropertyRow, SenderDb } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** Every property of the team, as the value checks need them (a team has few). */
export async function findPropertyDefinitions(db: Db, teamId: string): Promise<PropertyDefinition[]> {
  const rows = await db
    .selectFrom('contact_properties')
    .select(['id', 'key', 'type', 'fallback_value'])
    .where('team_id', '=', teamId)
    .execute();
  return rows.map((row) => ({ ...row, fallback_value: row.fallback_value ?? null }));
}

/** Creates a property unless the team has one with this key already (then undefined). */
export async function insertContactProperty(
  db: Db,
  property: { id: string; teamId: string; key: string; type: PropertyType; fallback: PropertyValue; now: Date },
): Promise<ContactPropertyRow | undefined> {
  return db
    .insertInto('contact_properties')
    .values({
      id: property.id,
      team_id: property.teamId,
      key: property.key,
      type: property.type,
      fallback_value: jsonOrNull(property.fallback),
      created_at: property.now,
    })
    .onConflict((oc) => oc.columns(['team_id', 'key']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findContactProperty(db: Db, teamId: string, id: string): Promise<ContactPropertyRow | undefined> {
  return db
    .selectFrom('contact_properties')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listContactProperties(
  db: Db,
  teamId: string,
  page: PaginationQuery,
): Promise<Page<ContactPropertyRow>> {
  return paginate(db.selectFrom('contact_properties').selectAll().where('team_id', '=', teamId), page);
}

export async function updatePropertyFallback(
  db: Db,
  teamId: string,
  id: string,
  fallback: PropertyValue,
): Promise<ContactPropertyRow | undefined> {
  return db
    .updateTable('contact_properties')
    .set({ fallback_value: jsonOrNull(fallback) })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Deletes a property. Contacts' values of it stay in `contacts.properties` under its id, which no
 * definition names any more, so they are never read again (a property made again gets a new id).
 */
export async function deleteContactProperty(
  db: Db,
  teamId: string,
  id: string,
): Promise<ContactPropertyRow | undefined> {
  return db
    .deleteFrom('contact_properties')
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** A jsonb value as the driver takes it; SQL null for no value. */
function jsonOrNull(value: PropertyValue): string | null {
  return value === null ? null : JSON.stringify(value);
}
