// Contact imports and the bulk statements a chunk of an import's rows writes: contacts, their segments and
// topic choices, failed rows, progress. Each takes the whole chunk in one statement (rows as one jsonb
// parameter, so the text and plan are the same whatever their number).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { PaginationQuery, Subscription } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import type { ImportCounts, ImportedContact, OnConflict } from '../domain/contact-import.ts';
import type { ContactImportRow, ContactRow, ImportStatus, SenderDb } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** An import without its file. */
export type ContactImportRecord = Omit<ContactImportRow, 'file'>;
export type ImportFailure = { row_number: number; reason: string };
export type ImportTopic = { id: string; subscription: Subscription };

const RECORD_COLUMNS = [
  'id',
  'team_id',
  'status',
  'on_conflict',
  'column_map',
  'segment_ids',
  'topics',
  'rows_done',
  'bytes_done',
  'total',
  'created',
  'updated',
  'skipped',
  'failed',
  'error',
  'created_at',
  'completed_at',
] as const;

export async function insertContactImport(
  db: Db,
  row: {
    id: string;
    teamId: string;
    onConflict: OnConflict;
    columnMap: Record<string, string>;
    segmentIds: string[];
    topics: ImportTopic[];
    file: Buffer;
    now: Date;
  },
): Promise<void> {
  await db
    .insertInto('contact_imports')
    .values({
      id: row.id,
      team_id: row.teamId,
      on_conflict: row.onConflict,
      column_map: JSON.stringify(row.columnMap),
      segment_ids: row.segmentIds,
      topics: JSON.stringify(row.topics),
      file: row.file,
      created_at: row.now,
    })
    .execute();
}

export async function findContactImport(db: Db, teamId: string, id: string): Promise<ContactImportRecord | undefined> {
  return db
    .selectFrom('contact_imports')
    .select(RECORD_COLUMNS)
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listContactImports(
  db: Db,
  teamId: string,
  status: ImportStatus | undefined,
  page: PaginationQuery,
): Promise<Page<ContactImportRecord>> {
  let query = db.selectFrom('contact_imports').select(RECORD_COLUMNS).where('team_id', '=', teamId);
  if (status) query = query.where('status', '=', status);
  return paginate(query, page);
}

/** The first `limit` failed rows of an import, in file order. */
export async function listImportFailures(db: Db, importId: string, limit: number): Promise<ImportFailure[]> {
  return db
    .selectFrom('contact_import_failures')
    .select(['row_number', 'reason'])
    .where('import_id', '=', importId)
    .orderBy('row_number')
    .limit(limit)
    .execute();
}

/** An import with its file, for a run (the file is the one large read of a run). */
export async function findImportWithFile(db: Db, teamId: string, id: string): Promise<ContactImportRow | undefined> {
  return db
    .selectFrom('contact_imports')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** queued → in_progress, when a run starts. */
export async function markImportStarted(db: Db, id: string): Promise<void> {
  await db
    .updateTable('contact_imports')
    .set({ status: 'in_progress' })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .execute();
}

/**
 * The import's progress, row-locked for the chunk that will advance it: only the run that still finds the
 * offset it started from may write the chunk, so two runs of one import never both write it.
 */
export async function lockImportProgress(
  trx: Transaction<SenderDb>,
  id: string,
): Promise<Pick<ContactImportRow, 'status' | 'bytes_done' | 'rows_done' | 'failed'> | undefined> {
  return trx
    .selectFrom('contact_imports')
    .select(['status', 'bytes_done', 'rows_done', 'failed'])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

type ContactInput = ImportedContact & { id: string };

/**
 * Creates the contacts whose address the team has no contact for (`id` is the new contact's); returns the
 * ids created. The rows' addresses are distinct.
 */
export async function insertImportedContacts(
  trx: Transaction<SenderDb>,
  teamId: string,
  contacts: readonly ContactInput[],
  now: Date,
): Promise<string[]> {
  if (contacts.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    insert into contacts (id, team_id, email, first_name, last_name, unsubscribed, properties, created_at, updated_at)
    select r.id, ${teamId}, r.email, r.first_name, r.last_name, coalesce(r.unsubscribed, false), r.properties, ${now}, ${now}
    from jsonb_to_recordset(${JSON.stringify(contacts)}::jsonb)
      as r(id uuid, email text, first_name text, last_name text, unsubscribed boolean, properties jsonb)
    on conflict (team_id, email_key) do nothing
    returning id`.execute(trx);
  return rows.map((row) => row.id);
}

/** Whether an imported row `r` changes the contact as it was (`o`). */
const CHANGED = sql<boolean>`(coalesce(r.first_name, o.first_name) is distinct from o.first_name
  or coalesce(r.last_name, o.last_name) is distinct from o.last_name
  or coalesce(r.unsubscribed, o.unsubscribed) is distinct from o.unsubscribed
  or o.properties || r.properties is distinct from o.properties)`;

/**
 * Writes the given values over the team's contacts with these addresses (a value absent from a row leaves
 * the contact's as it is; property values merge); returns, for each contact written, its id and the
 * `ordinal` of the row.
 */
export async function updateImportedContacts(
  trx: Transaction<SenderDb>,
  teamId: string,
  contacts: readonly (ImportedContact & { ordinal: number })[],
  now: Date,
): Promise<{ id: string; ordinal: number; changed: boolean }[]> {
  if (contacts.length === 0) return [];
  // `o` is the same row as it was before this statement: whether the row's values changed. A row that
  // changes nothing keeps its updated_at.
  const { rows } = await sql<{ id: string; ordinal: number; changed: boolean }>`
    update contacts c set
      first_name = coalesce(r.first_name, o.first_name),
      last_name = coalesce(r.last_name, o.last_name),
      unsubscribed = coalesce(r.unsubscribed, o.unsubscribed),
      properties = o.properties || r.properties,
      updated_at = case when ${CHANGED} then ${now} else o.updated_at end
    from jsonb_to_recordset(${JSON.stringify(contacts)}::jsonb)
        as r(ordinal int, email text, first_name text, last_name text, unsubscribed boolean, properties jsonb),
      contacts o
    where c.team_id = ${teamId} and c.email_key = lower(r.email) and o.id = c.id
    returning c.id, r.ordinal, ${CHANGED} as changed`.execute(trx);
  return rows;
}

/**
 * Moves `updated_at` of contacts an import changed through their segments or topics, and returns every
 * contact of `ids` as it is now, with its segments (for contact.updated).
 */
export async function changedImportedContacts(
  trx: Transaction<SenderDb>,
  teamId: string,
  ids: { touch: readonly string[]; all: readonly string[] },
  now: Date,
): Promise<(ContactRow & { segment_ids: string[] })[]> {
  if (ids.all.length === 0) return [];
  if (ids.touch.length > 0) {
    await sql`update contacts set updated_at = ${now}
      where team_id = ${teamId} and id = any(${[...ids.touch]}::uuid[])`.execute(trx);
  }
  const { rows } = await sql<ContactRow & { segment_ids: string[] }>`select c.*,
      array(select m.segment_id from contact_segments m where m.contact_id = c.id and m.team_id = c.team_id
        order by m.segment_id) as segment_ids
    from contacts c where c.team_id = ${teamId} and c.id = any(${[...ids.all]}::uuid[])
    order by c.id`.execute(trx);
  return rows;
}

/** Adds the contacts to those of the segments the team still has. */
export async function addImportedToSegments(
  trx: Transaction<SenderDb>,
  teamId: string,
  segmentIds: readonly string[],
  contactIds: readonly string[],
  now: Date,
): Promise<string[]> {
  if (segmentIds.length === 0 || contactIds.length === 0) return [];
  const { rows } = await sql<{ contact_id: string }>`
    insert into contact_segments (segment_id, contact_id, team_id, created_at)
    select s.id, c.id, ${teamId}, ${now}
    from segments s cross join unnest(${[...contactIds]}::uuid[]) as c(id)
    where s.team_id = ${teamId} and s.id = any(${[...segmentIds]}::uuid[])
    on conflict do nothing
    returning contact_id`.execute(trx);
  return rows.map((row) => row.contact_id);
}

/**
 * Sets the contacts' explicit choice of each of those topics the team still has; returns the contacts whose
 * choice changed (one id per changed choice).
 */
export async function setImportedTopicChoices(
  trx: Transaction<SenderDb>,
  teamId: string,
  topics: readonly ImportTopic[],
  contactIds: readonly string[],
  now: Date,
): Promise<string[]> {
  if (topics.length === 0 || contactIds.length === 0) return [];
  const { rows } = await sql<{ contact_id: string }>`
    insert into contact_topics (contact_id, topic_id, team_id, subscription, updated_at)
    select c.id, t.id, ${teamId}, r.subscription, ${now}
    from jsonb_to_recordset(${JSON.stringify(topics)}::jsonb) as r(id uuid, subscription text)
      join topics t on t.id = r.id and t.team_id = ${teamId}
      cross join unnest(${[...contactIds]}::uuid[]) as c(id)
    on conflict (contact_id, topic_id) do update set subscription = excluded.subscription, updated_at = excluded.updated_at
      where contact_topics.subscription is distinct from excluded.subscription
    returning contact_id`.execute(trx);
  return rows.map((row) => row.contact_id);
}

export async function insertImportFailures(
  trx: Transaction<SenderDb>,
  importId: string,
  failures: readonly ImportFailure[],
): Promise<void> {
  if (failures.length === 0) return;
  await trx
    .insertInto('contact_import_failures')
    .values(failures.map((failure) => ({ import_id: importId, ...failure })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Commits a chunk's progress: where the next row starts, and the chunk's counts added. */
export async function advanceImport(
  trx: Transaction<SenderDb>,
  id: string,
  progress: { rows: number; bytesDone: number; counts: ImportCounts },
): Promise<void> {
  const { counts } = progress;
  await trx
    .updateTable('contact_imports')
    .set((eb) => ({
      rows_done: eb('rows_done', '+', progress.rows),
      bytes_done: String(progress.bytesDone),
      total: eb('total', '+', counts.total),
      created: eb('created', '+', counts.created),
      updated: eb('updated', '+', counts.updated),
      skipped: eb('skipped', '+', counts.skipped),
      failed: eb('failed', '+', counts.failed),
    }))
    .where('id', '=', id)
    .execute();
}

/** completed (its file let go) or failed with why. */
export async function finishImport(
  trx: Transaction<SenderDb>,
  id: string,
  outcome: { status: 'completed' } | { status: 'failed'; error: string },
  now: Date,
): Promise<void> {
  await trx
    .updateTable('contact_imports')
    .set({
      status: outcome.status,
      error: outcome.status === 'failed' ? outcome.error : null,
      completed_at: now,
      file: Buffer.alloc(0),
    })
    .where('id', '=', id)
    .execute();
}

/** Refreshes the planner's statistics of the tables an import writes (a sample: a fraction of a second). */
export async function analyzeAudienceTables(db: Db): Promise<void> {
  await sql`analyze contacts, contact_segments, contact_topics`.execute(db);
}
