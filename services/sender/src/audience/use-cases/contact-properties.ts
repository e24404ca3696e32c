// A team's contact properties: the keys a contact's `properties` may carry, each with a type and an
// optional fallback value. Deleting one is one row: its values are keyed by its id and never read again.
import type { Kysely } from 'kysely';
import type { PaginationQuery, PropertyType } from '@postline/contracts';
import { isUuid, newId, notFound, validationError, type Page } from '@postline/platform';
import {
  deleteContactProperty,
  findContactProperty,
  insertContactProperty,
  listContactProperties,
  updatePropertyFallback,
} from '../db/contact-properties.ts';
import { propertyUses } from '../db/audience-counts.ts';
import type { ContactPropertyRow, SenderDb } from '../../db/schema.ts';
import { checkNewProperty, checkPropertyChange, type PropertyValue } from '../domain/contacts.ts';
import { refusalError } from '../../message/index.ts';

export type ContactPropertyDeps = { db: Kysely<SenderDb>; now: () => Date };

const NOT_FOUND = 'Contact property not found';

export async function createContactProperty(
  deps: ContactPropertyDeps,
  teamId: string,
  input: { key: string; type: PropertyType; fallback_value?: PropertyValue | undefined },
): Promise<ContactPropertyRow> {
  const checked = checkNewProperty(input);
  if (!checked.ok) throw refusalError(checked.refusal);
  const row = await insertContactProperty(deps.db, {
    id: newId(),
    teamId,
    key: input.key,
    type: input.type,
    fallback: checked.fallback,
    now: deps.now(),
  });
  if (!row) throw validationError(`A contact property with the key \`${input.key}\` already exists.`);
  return row;
}

export async function getContactProperty(
  deps: ContactPropertyDeps,
  teamId: string,
  id: string,
): Promise<ContactPropertyRow> {
  const row = isUuid(id) ? await findContactProperty(deps.db, teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound(NOT_FOUND);
  return row;
}

/** A page of the team's contact properties; with `counts`, each with how many contacts have a value. */
export async function pageOfContactProperties(
  deps: ContactPropertyDeps,
  teamId: string,
  page: PaginationQuery,
  counts = false,
): Promise<Page<ContactPropertyRow & { contacts_count?: number }>> {
  const found = await listContactProperties(deps.db, teamId, page);
  if (!counts) return found;
  const uses = await propertyUses(
    deps.db,
    teamId,
    found.data.map((row) => row.id),
  );
  return { ...found, data: found.data.map((row) => ({ ...row, contacts_count: uses.get(row.id) ?? 0 })) };
}

/** Changes a property's fallback value (of the property's type); its key and type are fixed. */
export async function changeContactProperty(
  deps: ContactPropertyDeps,
  teamId: string,
  id: string,
  input: { key?: string | undefined; type?: PropertyType | undefined; fallback_value?: PropertyValue | undefined },
): Promise<ContactPropertyRow> {
  return deps.db.transaction().execute(async (trx) => {
    const current = isUuid(id) ? await findContactProperty(trx, teamId, id.toLowerCase()) : undefined;
    if (!current) throw notFound(NOT_FOUND);
    const checked = checkPropertyChange(current, input);
    if (!checked.ok) throw refusalError(checked.refusal);
    if (checked.fallback === undefined) return current;
    return (await updatePropertyFallback(trx, teamId, current.id, checked.fallback)) ?? current;
  });
}

/** Deletes the team's property, in use or not (its values go with it), or 404. */
export async function deleteTeamContactProperty(
  deps: ContactPropertyDeps,
  teamId: string,
  id: string,
): Promise<ContactPropertyRow> {
  const row = isUuid(id) ? await deleteContactProperty(deps.db, teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound(NOT_FOUND);
  return row;
}
