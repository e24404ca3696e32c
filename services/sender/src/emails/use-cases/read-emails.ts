// Reading the team's sent emails.
import type { Kysely } from 'kysely';
import type { ApiRequests, PaginationQuery } from '@postline/contracts';
import { isUuid, notFound, type Page } from '@postline/platform';
import { exportEmails, findEmail, listEmails, listRecipients } from '../db/emails.ts';
import { EMAIL_EVENTS_SHOWN, listEmailEvents } from '../db/email-metrics.ts';
import { bareAddress, parseMailbox } from '../../message/index.ts';
import type { EmailRow, SenderDb } from '../../db/schema.ts';

/** The email id a path names; anything but a UUID names no email (404). */
export function checkEmailId(id: string | undefined): string {
  if (!id || !isUuid(id)) throw notFound('Email not found');
  return id;
}

/** One email of the team, or 404. */
export async function getEmail(db: Kysely<SenderDb>, teamId: string, id: string | undefined): Promise<EmailRow> {
  const email = await findEmail(db, teamId, checkEmailId(id));
  if (!email) throw notFound('Email not found');
  return email;
}

/** A page of the team's emails, narrowed by the list's filters. */
export async function pageOfEmails(
  db: Kysely<SenderDb>,
  teamId: string,
  filter: ApiRequests.EmailFilterQuery,
  query: PaginationQuery,
): Promise<Page<EmailRow>> {
  return listEmails(db, teamId, normalisedFilter(filter), query);
}

/** Addresses as they are stored: a recipient bare, its domain in punycode; the sender as its address was given. */
function normalisedFilter(filter: ApiRequests.EmailFilterQuery): ApiRequests.EmailFilterQuery {
  return {
    ...filter,
    ...(filter.to ? { to: bareAddress(filter.to) } : {}),
    ...(filter.from ? { from: parseMailbox(filter.from)?.address ?? filter.from } : {}),
  };
}

/** Every email the filters select, a page at a time (for a CSV export). */
export function emailsToExport(db: Kysely<SenderDb>, teamId: string, filter: ApiRequests.EmailFilterQuery) {
  return exportEmails(db, teamId, normalisedFilter(filter));
}

/** Each recipient of one of the team's emails, or 404 for an email the team does not have. */
export async function recipientsOf(db: Kysely<SenderDb>, teamId: string, id: string | undefined) {
  const email = await getEmail(db, teamId, id);
  return listRecipients(db, teamId, email.id);
}

/**
 * The kept events of one of the team's emails, oldest first (the first EMAIL_EVENTS_SHOWN, `hasMore` when
 * there are more), or 404 for an email the team does not have.
 */
export async function eventsOf(db: Kysely<SenderDb>, teamId: string, id: string | undefined) {
  const email = await getEmail(db, teamId, id);
  const rows = await listEmailEvents(db, teamId, email.id);
  return { events: rows.slice(0, EMAIL_EVENTS_SHOWN), hasMore: rows.length > EMAIL_EVENTS_SHOWN };
}
