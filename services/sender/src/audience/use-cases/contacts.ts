// Contacts: one per email per team, named by id or by email. Every change to a contact — its fields, its
// properties, its segments, its topic choices — publishes contact.created, contact.updated or
// contact.deleted in the same transaction (contact.updated: "a field, property, topic or subscription changed").
// A request that changes nothing publishes nothing. Imports (another module) publish nothing per row.
import type { Kysely, Transaction } from 'kysely';
import type { ContactCreated, PaginationQuery, PropertyType, Subscription } from '@postline/contracts';
import {
  enqueueEvent,
  isUuid,
  newId,
  notFound,
  pgCode,
  PG_UNIQUE_VIOLATION,
  validationError,
  type Page,
} from '@postline/platform';
import { findPropertyDefinitions } from '../db/contact-properties.ts';
import {
  deleteContact,
  findContact,
  insertContact,
  listContacts,
  listSegmentContacts,
  touchContact,
  updateContactFields,
  type ContactFilter,
  type ContactListRow,
} from '../db/contacts.ts';
import type { ContactRow, SegmentRow, SenderDb } from '../../db/schema.ts';
import {
  deleteMembership,
  findSegmentIds,
  insertMemberships,
  listContactSegments,
  segmentIdsOfContact,
} from '../db/segments.ts';
import { findTopicIds, listTopicsOfContact, upsertTopicChoices } from '../db/topics.ts';
import {
  applyContactChange,
  checkPropertyValues,
  contactEmail,
  contactKey,
  distinctChoices,
  distinctIds,
  effectiveSubscription,
  publicProperties,
  type ContactFields,
  type PropertyValue,
  type SubscriptionChoice,
} from '../domain/contacts.ts';
import { refusalError } from '../../message/index.ts';
import { requireSegment } from './segments.ts';
import { requireTopic } from './topics.ts';

export type ContactDeps = { db: Kysely<SenderDb>; now: () => Date };

type Trx = Transaction<SenderDb>;

/** What a request gives of a contact's fields; `properties` by key, as the client sends them. */
export type ContactInput = {
  email?: string | undefined;
  first_name?: string | null | undefined;
  last_name?: string | null | undefined;
  unsubscribed?: boolean | null | undefined;
  properties?: unknown;
};

export type NewContact = ContactInput & {
  email: string;
  segmentIds: readonly string[];
  topics: readonly SubscriptionChoice[];
  /** The legacy audience (= segment) the contact is created in: `audience_id`, or /audiences/{id}/contacts. */
  audienceId?: string | undefined;
};

/** A contact with its properties as the reference shows them (`{key: {value, type}}`). */
export type ContactWithProperties = {
  contact: ContactRow;
  properties: Record<string, { value: PropertyValue; type: PropertyType }>;
};

const CONTACT_NOT_FOUND = 'Contact not found';

/** Creates a contact with its segments and topic choices (contact.created); any refusal writes nothing. */
export async function createContact(deps: ContactDeps, teamId: string, input: NewContact): Promise<ContactRow> {
  const email = requireEmail(input.email);
  return deps.db.transaction().execute((trx) => insertNewContact(trx, deps.now(), teamId, { ...input, email }));
}

/**
 * POST /audiences/{id}/contacts: creates the contact in the segment or, as a contact is one record per email
 * now (a legacy client may add one address to several audiences), adds the existing one to it and applies
 * the fields given.
 */
export async function addAudienceContact(
  deps: ContactDeps,
  teamId: string,
  audienceId: string,
  input: ContactInput & { email: string },
): Promise<ContactRow> {
  const email = requireEmail(input.email);
  return deps.db.transaction().execute(async (trx) => {
    const segment = await requireSegment(trx, teamId, audienceId);
    const existing = await findContact(trx, teamId, { email }, { forUpdate: true });
    if (!existing)
      return insertNewContact(trx, deps.now(), teamId, {
        ...input,
        email,
        segmentIds: [],
        topics: [],
        audienceId: segment.id,
      });
    const joined = await insertMemberships(trx, teamId, existing.id, [segment.id], deps.now());
    return applyChange(
      trx,
      deps.now(),
      teamId,
      existing,
      { ...input, email },
      { alwaysPublish: joined.length > 0, audienceId: segment.id },
    );
  });
}

/** The team's contact named by `key` (id or email) with its properties, or 404; in `audienceId` if given. */
export async function getContact(
  deps: ContactDeps,
  teamId: string,
  key: string,
  audienceId?: string,
): Promise<ContactWithProperties> {
  const contact = await requireContact(deps.db, teamId, key, audienceId);
  const definitions = await findPropertyDefinitions(deps.db, teamId);
  return { contact, properties: publicProperties(contact.properties, definitions) };
}

/** The list's filters as asked: `topic` names a topic and the subscription wanted (opt_in unless given). */
export type ContactListFilter = Omit<ContactFilter, 'topic'> & {
  topic?: { id: string; subscription?: Subscription | undefined } | undefined;
};

/**
 * A page of the team's contacts, or of one segment's (404 when the segment or the topic is not the team's).
 */
export async function pageOfContacts(
  deps: ContactDeps,
  teamId: string,
  segmentId: string | undefined,
  page: PaginationQuery,
  listFilter: ContactListFilter = {},
): Promise<Page<ContactListRow>> {
  const { topic: asked, ...rest } = listFilter;
  const topic = asked ? await requireTopic(deps.db, teamId, asked.id) : undefined;
  const filter: ContactFilter = {
    ...rest,
    topic: topic && {
      id: topic.id,
      subscription: asked?.subscription ?? 'opt_in',
      defaultSubscription: topic.default_subscription,
    },
  };
  if (segmentId === undefined) return listContacts(deps.db, teamId, page, filter);
  const segment = await requireSegment(deps.db, teamId, segmentId);
  return listSegmentContacts(deps.db, teamId, segment.id, page, filter);
}

/** Changes a contact's fields and properties (contact.updated when anything changed); in `audienceId` if given. */
export async function updateContact(
  deps: ContactDeps,
  teamId: string,
  key: string,
  input: ContactInput,
  audienceId?: string,
): Promise<ContactRow> {
  const email = input.email === undefined ? undefined : requireEmail(input.email);
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const contact = await requireContact(trx, teamId, key, audienceId);
      return applyChange(trx, deps.now(), teamId, contact, { ...input, email }, { alwaysPublish: false });
    });
  } catch (err) {
    // The new email is another contact's: the unique index decides, also between two changes at once.
    if (email !== undefined && pgCode(err) === PG_UNIQUE_VIOLATION) throw duplicateEmail(email);
    throw err;
  }
}

/** Deletes a contact (contact.deleted with its last known record), or 404. */
export async function deleteTeamContact(deps: ContactDeps, teamId: string, key: string): Promise<ContactRow> {
  return deps.db.transaction().execute(async (trx) => {
    const contact = await requireContact(trx, teamId, key);
    const segmentIds = await segmentIdsOfContact(trx, teamId, contact.id);
    await deleteContact(trx, teamId, contact.id);
    await enqueueEvent(trx, 'contact.deleted', teamId, contactData(contact, segmentIds));
    return contact;
  });
}

/** DELETE /audiences/{id}/contacts/{key}: takes the contact out of that segment; nothing there is no error. */
export async function removeAudienceContact(
  deps: ContactDeps,
  teamId: string,
  audienceId: string,
  key: string,
): Promise<void> {
  if (!isUuid(audienceId)) return;
  await deps.db.transaction().execute(async (trx) => {
    const contact = await findContact(trx, teamId, contactKey(key), { forUpdate: true });
    if (contact && (await deleteMembership(trx, teamId, contact.id, audienceId.toLowerCase()))) {
      await publishContactChange(trx, deps.now(), teamId, contact.id);
    }
  });
}

/** Adds a contact to a segment (contact.updated unless it was in it already). Both must be the team's. */
export async function addContactToSegment(
  deps: ContactDeps,
  teamId: string,
  key: string,
  segmentId: string,
): Promise<{ contact: ContactRow; segment: SegmentRow }> {
  return deps.db.transaction().execute(async (trx) => {
    const contact = await requireContact(trx, teamId, key);
    const segment = await requireSegment(trx, teamId, segmentId);
    const joined = await insertMemberships(trx, teamId, contact.id, [segment.id], deps.now());
    if (joined.length > 0) await publishContactChange(trx, deps.now(), teamId, contact.id);
    return { contact, segment };
  });
}

/** Takes a contact out of a segment (contact.updated if it was in it). Both must be the team's. */
export async function removeContactFromSegment(
  deps: ContactDeps,
  teamId: string,
  key: string,
  segmentId: string,
): Promise<{ contact: ContactRow; segment: SegmentRow }> {
  return deps.db.transaction().execute(async (trx) => {
    const contact = await requireContact(trx, teamId, key);
    const segment = await requireSegment(trx, teamId, segmentId);
    if (await deleteMembership(trx, teamId, contact.id, segment.id))
      await publishContactChange(trx, deps.now(), teamId, contact.id);
    return { contact, segment };
  });
}

export async function pageOfContactSegments(
  deps: ContactDeps,
  teamId: string,
  key: string,
  page: PaginationQuery,
): Promise<Page<SegmentRow>> {
  const contact = await requireContact(deps.db, teamId, key);
  return listContactSegments(deps.db, teamId, contact.id, page);
}

/** A page of the team's topics with the contact's effective subscription to each. */
export async function pageOfContactTopics(
  deps: ContactDeps,
  teamId: string,
  key: string,
  page: PaginationQuery,
): Promise<Page<{ id: string; name: string; description: string | null; subscription: Subscription }>> {
  const contact = await requireContact(deps.db, teamId, key);
  const result = await listTopicsOfContact(deps.db, teamId, contact.id, page);
  return {
    ...result,
    data: result.data.map((topic) => ({
      id: topic.id,
      name: topic.name,
      description: topic.description,
      subscription: effectiveSubscription(topic.subscription ?? undefined, topic.default_subscription),
    })),
  };
}

/** Records a contact's explicit topic choices (contact.updated if any differs); an unknown topic writes nothing. */
export async function updateContactTopics(
  deps: ContactDeps,
  teamId: string,
  key: string,
  choices: readonly SubscriptionChoice[],
): Promise<ContactRow> {
  return deps.db.transaction().execute(async (trx) => {
    const contact = await requireContact(trx, teamId, key);
    const topics = await requireTopicChoices(trx, teamId, choices);
    const changed = await upsertTopicChoices(trx, teamId, contact.id, topics, deps.now());
    if (changed > 0) await publishContactChange(trx, deps.now(), teamId, contact.id);
    return contact;
  });
}

/**
 * A contact's own choices (its unsubscribe link: the one-click POST, the preference page), inside the
 * caller's transaction on the row-locked `contact`: `unsubscribed` when given, and explicit topic choices
 * (topics of the team, checked by the caller). One contact.updated when anything changed; nothing otherwise.
 */
export async function applySubscriptionChoices(
  trx: Trx,
  now: Date,
  teamId: string,
  contact: ContactRow,
  change: { unsubscribed?: boolean | undefined; topics: readonly SubscriptionChoice[] },
): Promise<ContactRow> {
  const fields = applyContactChange(contact, { unsubscribed: change.unsubscribed });
  const topicsChanged = await upsertTopicChoices(trx, teamId, contact.id, distinctChoices(change.topics), now);
  if (!fields.changed && topicsChanged === 0) return contact;
  const updated = fields.changed
    ? await updateContactFields(trx, teamId, contact.id, fields.next, now)
    : await touchContact(trx, teamId, contact.id, now);
  await enqueueEvent(
    trx,
    'contact.updated',
    teamId,
    contactData(updated, await segmentIdsOfContact(trx, teamId, contact.id)),
  );
  return updated;
}

/** What a signup form's confirmed signup asks of the audience. */
export type SignedUpContact = {
  email: string;
  first_name: string | null;
  last_name: string | null;
  segmentIds: readonly string[];
  topicIds: readonly string[];
  formId: string;
  /** The person confirmed it by the emailed link (double opt-in); false for a form without one. */
  confirmed: boolean;
};

/**
 * A signup form's confirmed signup, inside the caller's transaction. No contact of that address: one is
 * created, subscribed, in the form's segments and opted in to its topics, with contact.created naming the
 * form as its `source`. Else the existing contact is added to them, its names filled only where it has none,
 * with one contact.updated when anything changed; no second contact.created. Confirmed by the person (double
 * opt-in), it is subscribed again and opted in to the form's topics; unconfirmed (a form without double
 * opt-in, which anyone may submit for any address), its unsubscribe and its topic choices stand, and only
 * topics it never chose are opted in. Segments and topics deleted since the form was saved are skipped.
 */
export async function addSignedUpContact(
  trx: Trx,
  now: Date,
  teamId: string,
  signup: SignedUpContact,
): Promise<{ contact: ContactRow; created: boolean }> {
  const segmentIds = (await findSegmentIds(trx, teamId, distinctIds(signup.segmentIds))).toSorted();
  const topics = (await findTopicIds(trx, teamId, distinctIds(signup.topicIds))).map(
    (id): SubscriptionChoice => ({ id, subscription: 'opt_in' }),
  );
  let existing = await findContact(trx, teamId, { email: signup.email }, { forUpdate: true });
  if (!existing) {
    const contact = await insertContact(trx, {
      ...EMPTY_CONTACT,
      email: signup.email,
      first_name: signup.first_name,
      last_name: signup.last_name,
      id: newId(),
      teamId,
      now,
    });
    if (contact) {
      await insertMemberships(trx, teamId, contact.id, segmentIds, now);
      await upsertTopicChoices(trx, teamId, contact.id, topics, now);
      await enqueueEvent(trx, 'contact.created', teamId, {
        ...contactData(contact, segmentIds),
        source: { type: 'form', form_id: signup.formId },
      });
      return { contact, created: true };
    }
    // Created meanwhile (the API, an import): updated as the existing contact it now is.
    existing = await findContact(trx, teamId, { email: signup.email }, { forUpdate: true });
    if (!existing) throw new Error('A contact that conflicted on insert is gone.');
  }
  const joined = await insertMemberships(trx, teamId, existing.id, segmentIds, now);
  const topicsChanged = await upsertTopicChoices(trx, teamId, existing.id, topics, now, {
    keepMade: !signup.confirmed,
  });
  const fields = applyContactChange(existing, {
    unsubscribed: signup.confirmed ? false : existing.unsubscribed,
    first_name: existing.first_name ?? signup.first_name,
    last_name: existing.last_name ?? signup.last_name,
  });
  if (!fields.changed && topicsChanged === 0 && joined.length === 0) return { contact: existing, created: false };
  const updated = fields.changed
    ? await updateContactFields(trx, teamId, existing.id, fields.next, now)
    : await touchContact(trx, teamId, existing.id, now);
  await enqueueEvent(
    trx,
    'contact.updated',
    teamId,
    contactData(updated, await segmentIdsOfContact(trx, teamId, existing.id)),
  );
  return { contact: updated, created: false };
}

const EMPTY_CONTACT: ContactFields = {
  email: '',
  first_name: null,
  last_name: null,
  unsubscribed: false,
  properties: {},
};

/** Writes a new contact (its email checked) with its segments and topic choices, and contact.created. */
async function insertNewContact(trx: Trx, now: Date, teamId: string, input: NewContact): Promise<ContactRow> {
  const { next } = await contactFields(trx, teamId, input, EMPTY_CONTACT);
  const audienceId = input.audienceId?.toLowerCase();
  const segmentIds = await requireSegmentIds(trx, teamId, [...(audienceId ? [audienceId] : []), ...input.segmentIds]);
  const topics = await requireTopicChoices(trx, teamId, input.topics);
  const contact = await insertContact(trx, { ...next, id: newId(), teamId, now });
  if (!contact) throw duplicateEmail(input.email);
  await insertMemberships(trx, teamId, contact.id, segmentIds, now);
  await upsertTopicChoices(trx, teamId, contact.id, topics, now);
  await enqueueEvent(trx, 'contact.created', teamId, contactData(contact, segmentIds.toSorted(), audienceId));
  return contact;
}

/** The contact's fields after `input`, its property values checked against the team's properties. */
async function contactFields(trx: Trx, teamId: string, input: ContactInput, current: ContactFields) {
  const checked = checkPropertyValues(input.properties, await findPropertyDefinitions(trx, teamId));
  if (!checked.ok) throw refusalError(checked.refusal);
  return applyContactChange(current, {
    email: input.email,
    first_name: input.first_name,
    last_name: input.last_name,
    unsubscribed: input.unsubscribed ?? undefined,
    properties: checked.values,
  });
}

/** Applies `input` to a (row-locked) contact; publishes contact.updated when it changed, or when told to. */
async function applyChange(
  trx: Trx,
  now: Date,
  teamId: string,
  contact: ContactRow,
  input: ContactInput,
  publish: { alwaysPublish: boolean; audienceId?: string },
): Promise<ContactRow> {
  const { changed, next } = await contactFields(trx, teamId, input, contact);
  if (!changed && !publish.alwaysPublish) return contact;
  const updated = changed
    ? await updateContactFields(trx, teamId, contact.id, next, now)
    : await touchContact(trx, teamId, contact.id, now);
  await enqueueEvent(
    trx,
    'contact.updated',
    teamId,
    contactData(updated, await segmentIdsOfContact(trx, teamId, contact.id), publish.audienceId),
  );
  return updated;
}

/** A change to a contact's segments or topics: its `updated_at` moves and contact.updated is published. */
async function publishContactChange(trx: Trx, now: Date, teamId: string, contactId: string): Promise<void> {
  const contact = await touchContact(trx, teamId, contactId, now);
  await enqueueEvent(
    trx,
    'contact.updated',
    teamId,
    contactData(contact, await segmentIdsOfContact(trx, teamId, contactId)),
  );
}

/**
 * The `data` of the contact events (as Resend's webhooks carry it). `audience_id`, the legacy name of a segment, is
 * the audience the request named, else the contact's oldest segment (ids are UUIDv7); absent with none.
 */
export function contactData(contact: ContactRow, segmentIds: readonly string[], audienceId?: string): ContactCreated {
  const audience = audienceId ?? segmentIds[0];
  return {
    id: contact.id,
    ...(audience ? { audience_id: audience } : {}),
    segment_ids: [...segmentIds],
    created_at: contact.created_at.toISOString(),
    updated_at: contact.updated_at.toISOString(),
    email: contact.email,
    ...(contact.first_name === null ? {} : { first_name: contact.first_name }),
    ...(contact.last_name === null ? {} : { last_name: contact.last_name }),
    unsubscribed: contact.unsubscribed,
  };
}

/**
 * The team's contact named by `key` (a UUID is an id, anything else an email), row-locked inside a
 * transaction; with `audienceId`, only if it is in that segment (the legacy audience-scoped paths).
 */
async function requireContact(
  db: Kysely<SenderDb> | Trx,
  teamId: string,
  key: string,
  audienceId?: string,
): Promise<ContactRow> {
  if (audienceId !== undefined) await requireSegment(db, teamId, audienceId);
  const contact = await findContact(db, teamId, contactKey(key), { forUpdate: db.isTransaction });
  if (!contact) throw notFound(CONTACT_NOT_FOUND);
  if (
    audienceId !== undefined &&
    !(await segmentIdsOfContact(db, teamId, contact.id)).includes(audienceId.toLowerCase())
  ) {
    throw notFound(CONTACT_NOT_FOUND);
  }
  return contact;
}

/** Every segment named is the team's (404 naming the first that is not); each once, lower case. */
async function requireSegmentIds(trx: Trx, teamId: string, given: readonly string[]): Promise<string[]> {
  const ids = distinctIds(given);
  const found = new Set(await findSegmentIds(trx, teamId, ids.filter(isUuid)));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw notFound(`Segment \`${missing}\` not found.`);
  return ids;
}

/** Every topic named is the team's (404 naming the first that is not); each once, the last choice winning. */
async function requireTopicChoices(
  trx: Trx,
  teamId: string,
  given: readonly SubscriptionChoice[],
): Promise<SubscriptionChoice[]> {
  const choices = distinctChoices(given);
  const found = new Set(await findTopicIds(trx, teamId, choices.map((choice) => choice.id).filter(isUuid)));
  const missing = choices.find((choice) => !found.has(choice.id));
  if (missing !== undefined) throw notFound(`Topic \`${missing.id}\` not found.`);
  return choices;
}

function requireEmail(value: string): string {
  const email = contactEmail(value);
  if (email === undefined)
    throw validationError('Invalid `email` field. The email address needs to follow the `email@example.com` format.');
  return email;
}

function duplicateEmail(email: string) {
  return validationError(`A contact with the email \`${email}\` already exists.`);
}
