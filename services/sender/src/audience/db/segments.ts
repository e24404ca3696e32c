// Segments (the reference's former "audiences") and their members.
import type { Kysely, Transaction } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import type { SegmentRow, SenderDb } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

export async function insertSegment(
  db: Db,
  segment: { id: string; teamId: string; name: string; now: Date },
): Promise<SegmentRow> {
  return db
    .insertInto('segments')
    .values({ id: segment.id, team_id: segment.teamId, name: segment.name, created_at: segment.now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSegment(db: Db, teamId: string, id: string): Promise<SegmentRow | undefined> {
  return db.selectFrom('segments').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

/** Which of these segment ids the team has. */
export async function findSegmentIds(db: Db, teamId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('segments')
    .select('id')
    .where('team_id', '=', teamId)
    .where('id', 'in', ids)
    .execute();
  return rows.map((row) => row.id);
}

export async function listSegments(db: Db, teamId: string, page: PaginationQuery): Promise<Page<SegmentRow>> {
  return paginate(db.selectFrom('segments').selectAll().where('team_id', '=', teamId), page);
}

export async function renameSegment(db: Db, teamId: string, id: string, name: string): Promise<SegmentRow | undefined> {
  return db
    .updateTable('segments')
    .set({ name })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a segment; its memberships go with it (the contacts stay). */
export async function deleteSegment(db: Db, teamId: string, id: string): Promise<SegmentRow | undefined> {
  return db.deleteFrom('segments').where('team_id', '=', teamId).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Adds a contact to segments of its team; returns the ids of the segments it was not in before. */
export async function insertMemberships(
  db: Db,
  teamId: string,
  contactId: string,
  segmentIds: readonly string[],
  now: Date,
): Promise<string[]> {
  if (segmentIds.length === 0) return [];
  const rows = await db
    .insertInto('contact_segments')
    .values(
      segmentIds.map((segmentId) => ({
        segment_id: segmentId,
        contact_id: contactId,
        team_id: teamId,
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['segment_id', 'contact_id']).doNothing())
    .returning('segment_id')
    .execute();
  return rows.map((row) => row.segment_id);
}

/** Takes a contact out of a segment; whether it was in it. */
export async function deleteMembership(db: Db, teamId: string, contactId: string, segmentId: string): Promise<boolean> {
  const row = await db
    .deleteFrom('contact_segments')
    .where('segment_id', '=', segmentId)
    .where('contact_id', '=', contactId)
    .where('team_id', '=', teamId)
    .returning('segment_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The ids of a contact's segments, in id order (by `contact_segments_contact`). */
export async function segmentIdsOfContact(db: Db, teamId: string, contactId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('contact_segments')
    .select('segment_id')
    .where('contact_id', '=', contactId)
    .where('team_id', '=', teamId)
    .orderBy('segment_id')
    .execute();
  return rows.map((row) => row.segment_id);
}

/** A page of a contact's segments, newest first, by `contact_segments_contact` (contact_id, segment_id). */
export async function listContactSegments(
  db: Db,
  teamId: string,
  contactId: string,
  page: PaginationQuery,
): Promise<Page<SegmentRow>> {
  const query = db
    .selectFrom('contact_segments')
    .innerJoin('segments', 'segments.id', 'contact_segments.segment_id')
    .selectAll('segments')
    .where('contact_segments.contact_id', '=', contactId)
    .where('segments.team_id', '=', teamId);
  return paginate(query, page, { idColumn: 'contact_segments.segment_id' });
}
