// CSV contact imports: made at once from the upload (the file stored, a `sender.import-contacts` command in
// the same transaction), then run in the background in chunks of rows. Each chunk commits in one
// transaction its contacts, their segments and topic choices, its failed rows, the counts and the offset
// where the next row starts; so a run that stops anywhere (a crash, a shutdown) is resumed from that
// offset by the next one, and no row is written twice. An import sends contact.updated for each existing
// contact it changed, in the chunk's transaction, and no contact.created.
import type { Kysely, Transaction } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { findPropertyDefinitions } from '../db/contact-properties.ts';
import { findSegmentIds } from '../db/segments.ts';
import { findTopicIds } from '../db/topics.ts';
import {
  enqueue,
  enqueueCommand,
  isUuid,
  newId,
  notFound,
  validationError,
  type OutboxMessage,
  type Page,
} from '@postline/platform';
import {
  addImportedToSegments,
  analyzeAudienceTables,
  advanceImport,
  changedImportedContacts,
  findContactImport,
  findImportWithFile,
  finishImport,
  insertContactImport,
  insertImportedContacts,
  insertImportFailures,
  listContactImports,
  listImportFailures,
  lockImportProgress,
  markImportStarted,
  setImportedTopicChoices,
  updateImportedContacts,
  type ContactImportRecord,
  type ImportFailure,
  type ImportTopic,
} from '../db/contact-imports.ts';
import type { ContactImportRow, ImportStatus, SenderDb } from '../../db/schema.ts';
import { contactData } from './contacts.ts';
import {
  chunkCounts,
  foldRepeatedAddresses,
  MAX_RECORDED_FAILURES,
  readRow,
  resolveColumnMap,
  rowReader,
  type ColumnMapRequest,
  type ImportedContact,
  type OnConflict,
  type RowReader,
} from '../domain/contact-import.ts';
import { csvHeader, CsvFileError, csvRecords, type CsvRecord } from '../domain/csv-records.ts';
import { refusalError } from '../../message/index.ts';

export type ContactImportDeps = { db: Kysely<SenderDb>; now: () => Date };

/** An upload, its form fields parsed. */
export type ImportRequest = {
  file: Buffer;
  onConflict: OnConflict;
  columnMap: ColumnMapRequest | undefined;
  segmentIds: readonly string[];
  topics: readonly ImportTopic[];
};

/**
 * Makes an import from an upload: the header must give the email column (by name or `column_map`), and the
 * segments and topics must be the team's (404 naming the first that is not). Returns the import's id.
 */
export async function createContactImport(
  deps: ContactImportDeps,
  teamId: string,
  request: ImportRequest,
): Promise<string> {
  const header = await csvHeader(request.file);
  if (!header.ok) throw validationError(header.reason);
  const definitions = await findPropertyDefinitions(deps.db, teamId);
  const resolved = resolveColumnMap(header.columns, request.columnMap, definitions);
  if (!resolved.ok) throw refusalError(resolved.refusal);
  const segmentIds = [...new Set(request.segmentIds.map((id) => id.toLowerCase()))];
  // A topic named twice takes its last subscription.
  const topics = [
    ...new Map(request.topics.map((topic) => [topic.id.toLowerCase(), topic.subscription])).entries(),
  ].map(([id, subscription]) => ({ id, subscription }));
  const [foundSegments, foundTopics] = await Promise.all([
    findSegmentIds(deps.db, teamId, segmentIds.filter(isUuid)),
    findTopicIds(deps.db, teamId, topics.map((topic) => topic.id).filter(isUuid)),
  ]);
  const known = { segments: new Set(foundSegments), topics: new Set(foundTopics) };
  const unknownSegment = segmentIds.find((id) => !known.segments.has(id));
  if (unknownSegment !== undefined) throw notFound(`Segment \`${unknownSegment}\` not found`);
  const unknownTopic = topics.find((topic) => !known.topics.has(topic.id));
  if (unknownTopic !== undefined) throw notFound(`Topic \`${unknownTopic.id}\` not found`);

  const id = newId();
  await deps.db.transaction().execute(async (trx) => {
    await insertContactImport(trx, {
      id,
      teamId,
      onConflict: request.onConflict,
      columnMap: resolved.map,
      segmentIds,
      topics,
      file: request.file,
      now: deps.now(),
    });
    await enqueueCommand(trx, 'sender.import-contacts', teamId, { import_id: id });
  });
  return id;
}

/** The team's import with its first failed rows, or 404. */
export async function getContactImport(
  deps: ContactImportDeps,
  teamId: string,
  id: string,
): Promise<{ record: ContactImportRecord; failures: ImportFailure[] }> {
  const record = isUuid(id) ? await findContactImport(deps.db, teamId, id.toLowerCase()) : undefined;
  if (!record) throw notFound('Contact import not found');
  return { record, failures: await listImportFailures(deps.db, record.id, MAX_RECORDED_FAILURES) };
}

export async function pageOfContactImports(
  deps: ContactImportDeps,
  teamId: string,
  status: ImportStatus | undefined,
  page: PaginationQuery,
): Promise<Page<ContactImportRecord>> {
  return listContactImports(deps.db, teamId, status, page);
}

export type ImportRunDeps = ContactImportDeps & {
  /** Rows per chunk (one transaction each). */
  chunkRows: number;
  /** A run longer than this hands the rest over to a new command (imports of other teams get their turn). */
  runMs: number;
};

/**
 * What a run did: finished the import (`completed`, `failed`), handed the rest over to a new command
 * (`handed_over`: told to stop, or its time was up), found it finished already (`finished_before`: a
 * redelivered command) or found another run ahead of it (`superseded`).
 */
export type ImportRunOutcome = 'completed' | 'failed' | 'handed_over' | 'finished_before' | 'superseded';

/** An import being run: where its committed progress stands. */
type Run = { row: ContactImportRow; bytesDone: number; rowsDone: number };

/** The reader of an import that ends before reading a row. */
const NO_ROWS: RowReader = { width: 0, fields: {}, properties: [] };

/**
 * Runs (or resumes) an import from the offset its last committed chunk reached. `stopping` is asked between
 * chunks: a run told to stop hands the rest over and returns. Safe to call again for the same import at
 * any time: a chunk is written only by the run that finds the import where it left it.
 */
export async function runContactImport(
  deps: ImportRunDeps,
  teamId: string,
  importId: string,
  stopping: () => boolean,
): Promise<ImportRunOutcome> {
  const row = await findImportWithFile(deps.db, teamId, importId);
  if (!row || row.status === 'completed' || row.status === 'failed') return 'finished_before';
  await markImportStarted(deps.db, importId);
  const started = performance.now();
  const definitions = await findPropertyDefinitions(deps.db, teamId);
  const header = await csvHeader(row.file);
  const read = header.ok ? rowReader(header.columns, row.column_map, definitions) : header;
  const run: Run = { row, bytesDone: Number(row.bytes_done), rowsDone: row.rows_done };
  if (!read.ok)
    return ended(await writeChunk(deps, run, NO_ROWS, [], { status: 'failed', error: read.reason }), 'failed');
  const { reader } = read;
  const dataStart = header.ok ? header.end : 0;

  let chunk: CsvRecord[] = [];
  try {
    for await (const record of csvRecords(row.file, Math.max(run.bytesDone, dataStart))) {
      chunk.push(record);
      if (chunk.length < deps.chunkRows) continue;
      if (!(await writeChunk(deps, run, reader, chunk))) return 'superseded';
      chunk = [];
      if (stopping() || performance.now() - started > deps.runMs) {
        await deps.db
          .transaction()
          .execute((trx) => enqueueCommand(trx, 'sender.import-contacts', teamId, { import_id: importId }));
        return 'handed_over';
      }
    }
  } catch (err) {
    if (!(err instanceof CsvFileError)) throw err;
    // The rows before the unreadable part are written; the import ends there.
    return ended(await writeChunk(deps, run, reader, chunk, { status: 'failed', error: err.message }), 'failed');
  }
  const outcome = ended(await writeChunk(deps, run, reader, chunk, { status: 'completed' }), 'completed');
  // A bulk load leaves the planner's statistics behind (and a server may run without autovacuum): the
  // lists' plans choose between an ordered index scan and a sort on them. Statistics only, so a failure
  // here changes nothing the import wrote.
  if (outcome === 'completed' && run.rowsDone >= ANALYZE_AFTER_ROWS)
    await analyzeAudienceTables(deps.db).catch(() => undefined);
  return outcome;
}

/** Imports of at least this many rows refresh the statistics of the tables they wrote. */
const ANALYZE_AFTER_ROWS = 1_000;

function ended(written: boolean, outcome: 'completed' | 'failed'): ImportRunOutcome {
  return written ? outcome : 'superseded';
}

/**
 * One chunk in one transaction, and the end of the import with the last one (`finish`). False when the
 * import is no longer where this run left it (another run wrote it): nothing is written then.
 */
async function writeChunk(
  deps: ImportRunDeps,
  run: Run,
  reader: RowReader,
  records: readonly CsvRecord[],
  finish?: { status: 'completed' } | { status: 'failed'; error: string },
): Promise<boolean> {
  const { row } = run;
  const written = await deps.db.transaction().execute(async (trx) => {
    const progress = await lockImportProgress(trx, row.id);
    if (progress?.status !== 'in_progress' || Number(progress.bytes_done) !== run.bytesDone) return false;
    const now = deps.now();
    const good: ImportedContact[] = [];
    const failures: ImportFailure[] = [];
    records.forEach((record, index) => {
      const result = readRow(record.values, reader);
      if (result.ok) good.push(result.contact);
      else failures.push({ row_number: run.rowsDone + index + 1, reason: result.reason });
    });
    const { contacts, repeats } = foldRepeatedAddresses(good, row.on_conflict);
    const fresh = contacts.map((contact) => ({ ...contact, id: newId() }));
    const created = new Set(await insertImportedContacts(trx, row.team_id, fresh, now));
    const existing = fresh.flatMap((contact, ordinal) => (created.has(contact.id) ? [] : [{ ...contact, ordinal }]));
    const updated = row.on_conflict === 'upsert' ? await updateImportedContacts(trx, row.team_id, existing, now) : [];
    const contactIds = [...new Set([...created, ...updated.map((contact) => contact.id)])];
    const joined = await addImportedToSegments(trx, row.team_id, row.segment_ids, contactIds, now);
    const chose = await setImportedTopicChoices(trx, row.team_id, row.topics, contactIds, now);
    await publishImportedChanges(trx, row.team_id, {
      fields: updated.filter((contact) => contact.changed).map((contact) => contact.id),
      memberships: [...joined, ...chose].filter((id) => !created.has(id)),
      now,
    });
    await insertImportFailures(trx, row.id, failures.slice(0, Math.max(0, MAX_RECORDED_FAILURES - progress.failed)));
    const counts = chunkCounts({
      rows: records.length,
      failed: failures.length,
      contacts: contacts.length,
      repeats,
      created: created.size,
      updated: new Set(updated.map((contact) => contact.ordinal)).size,
      onConflict: row.on_conflict,
    });
    const bytesDone = records.at(-1)?.end ?? run.bytesDone;
    await advanceImport(trx, row.id, { rows: records.length, bytesDone, counts });
    if (finish) await finishImport(trx, row.id, finish, now);
    return true;
  });
  if (written) {
    run.bytesDone = records.at(-1)?.end ?? run.bytesDone;
    run.rowsDone += records.length;
  }
  return written;
}

/**
 * contact.updated for each existing contact a chunk changed (upsert: a field, property or unsubscribe
 * value; a segment joined; a topic choice changed), as the API sends it; contacts the import created send
 * nothing. A contact changed only through its segments or topics has its `updated_at` moved here.
 */
async function publishImportedChanges(
  trx: Transaction<SenderDb>,
  teamId: string,
  changes: { fields: readonly string[]; memberships: readonly string[]; now: Date },
): Promise<void> {
  const fields = new Set(changes.fields);
  const all = [...new Set([...changes.fields, ...changes.memberships])];
  const contacts = await changedImportedContacts(
    trx,
    teamId,
    { touch: all.filter((id) => !fields.has(id)), all },
    changes.now,
  );
  await enqueue(
    trx,
    contacts.map(
      (contact): OutboxMessage => ({
        exchange: 'events',
        type: 'contact.updated',
        team_id: teamId,
        data: contactData(contact, contact.segment_ids),
      }),
    ),
  );
}
