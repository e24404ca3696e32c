// Segments (and the legacy /audiences, the same records): create, read, rename, delete. Membership changes
// are changes to a contact and live in use-cases/contacts.ts.
import type { Kysely, Transaction } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { isUuid, newId, notFound, type Page } from '@postline/platform';
import { deleteSegment, findSegment, insertSegment, listSegments, renameSegment } from '../db/segments.ts';
import { segmentSizes } from '../db/audience-counts.ts';
import type { SegmentRow, SenderDb } from '../../db/schema.ts';

export type SegmentDeps = { db: Kysely<SenderDb>; now: () => Date };

/** The reference's answer for a segment that is not the team's (HAR: GET /segments/{bad id}). */
export const SEGMENT_NOT_FOUND = 'Audience not found';

/** The team's segment of this id, or 404 (an id that is not a UUID names none). */
export async function requireSegment(
  db: Kysely<SenderDb> | Transaction<SenderDb>,
  teamId: string,
  id: string,
): Promise<SegmentRow> {
  const row = isUuid(id) ? await findSegment(db, teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound(SEGMENT_NOT_FOUND);
  return row;
}

export async function createSegment(deps: SegmentDeps, teamId: string, name: string): Promise<SegmentRow> {
  return insertSegment(deps.db, { id: newId(), teamId, name, now: deps.now() });
}

export async function getSegment(deps: SegmentDeps, teamId: string, id: string): Promise<SegmentRow> {
  return requireSegment(deps.db, teamId, id);
}

/** A page of the team's segments; with `counts`, each with its number of contacts. */
export async function pageOfSegments(
  deps: SegmentDeps,
  teamId: string,
  page: PaginationQuery,
  counts = false,
): Promise<Page<SegmentRow & { contacts_count?: number }>> {
  const found = await listSegments(deps.db, teamId, page);
  if (!counts) return found;
  const sizes = await segmentSizes(
    deps.db,
    teamId,
    found.data.map((row) => row.id),
  );
  return { ...found, data: found.data.map((row) => ({ ...row, contacts_count: sizes.get(row.id) ?? 0 })) };
}

export async function renameTeamSegment(
  deps: SegmentDeps,
  teamId: string,
  id: string,
  name: string,
): Promise<SegmentRow> {
  const row = isUuid(id) ? await renameSegment(deps.db, teamId, id.toLowerCase(), name) : undefined;
  if (!row) throw notFound(SEGMENT_NOT_FOUND);
  return row;
}

/**
 * Deletes the team's segment; its contacts stay (no contact.updated for each of them: a segment may hold
 * millions). A segment that is not there answers the same (deleted:true, as Resend does).
 */
export async function deleteTeamSegment(deps: SegmentDeps, teamId: string, id: string): Promise<void> {
  if (isUuid(id)) await deleteSegment(deps.db, teamId, id.toLowerCase());
}
