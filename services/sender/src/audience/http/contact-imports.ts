import busboy from 'busboy';
import { Router, type Request } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { CONTACT_IMPORT_FILE_LIMIT_BYTES, PaginationQuery } from '@postline/contracts';
import {
  ApiError,
  createSlots,
  formatTimestamp,
  missingField,
  parseInput,
  route,
  teamOf,
  validationError,
} from '@postline/platform';
import type { ContactImportRecord, ImportFailure } from '../db/contact-imports.ts';
import type { SenderDb } from '../../db/schema.ts';
import { IMPORT_FIELDS, type ColumnMapRequest } from '../domain/contact-import.ts';
import { PROPERTY_KEY } from '../domain/contacts.ts';
import { createContactImport, getContactImport, pageOfContactImports } from '../use-cases/contact-imports.ts';

export type ContactImportRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

/** Uploads read at once by one process: each holds its file in memory until it is stored. */
const CONCURRENT_UPLOADS = 2;
/** The form fields besides the file are small JSON texts. */
const MAX_FIELD_BYTES = 1024 * 1024;
const MAX_SEGMENTS = 100;
const MAX_TOPICS = 100;

const ImportStatus = z.enum(['queued', 'in_progress', 'completed', 'failed']);
const Column = z.string().trim().min(1, 'must name a column');
/** A property's column: the SDK's `{column, type}`, or the column alone. */
const PropertyColumn = z.union([
  Column.transform((column) => ({ column })),
  z.object({ column: Column, type: z.string().optional() }),
]);
/**
 * `column_map`: field → column, properties under `properties` (as the SDK sends it) or, flat, any other
 * key that is a property key.
 */
const ColumnMapField = z
  .object({
    email: Column.nullish(),
    first_name: Column.nullish(),
    last_name: Column.nullish(),
    unsubscribed: Column.nullish(),
    properties: z.record(z.string(), PropertyColumn).nullish(),
  })
  .catchall(z.union([Column, z.null()]))
  .superRefine((map, ctx) => {
    const flat = Object.keys(map).filter((key) => !['properties', ...IMPORT_FIELDS].includes(key));
    for (const key of [...flat, ...Object.keys(map.properties ?? {})]) {
      if (!PROPERTY_KEY.test(key))
        ctx.addIssue({ code: 'custom', message: `\`${key}\` is not a contact field nor a property key.`, path: [key] });
    }
  })
  .transform((map): ColumnMapRequest => {
    const fields: ColumnMapRequest['fields'] = {};
    const properties: ColumnMapRequest['properties'] = {};
    for (const [key, value] of Object.entries(map)) {
      if (value === null || value === undefined || key === 'properties') continue;
      if ((IMPORT_FIELDS as readonly string[]).includes(key))
        fields[key as keyof ColumnMapRequest['fields']] = value as string;
      else properties[key] = { column: value as string };
    }
    return { fields, properties: { ...properties, ...map.properties } };
  });
const SegmentRef = z
  .union([z.string(), z.object({ id: z.string() })])
  .transform((ref) => (typeof ref === 'string' ? ref : ref.id));
// A string first, so that a subscription left out is a missing field rather than a wrong value.
const TopicRef = z.object({ id: z.string(), subscription: z.string().pipe(z.enum(['opt_in', 'opt_out'])) });
const UploadFields = z.object({
  column_map: ColumnMapField.optional(),
  on_conflict: z.enum(['upsert', 'skip']).default('skip'),
  segments: z.array(SegmentRef).max(MAX_SEGMENTS).default([]),
  topics: z.array(TopicRef).max(MAX_TOPICS).default([]),
});
const ListQuery = z.object({ status: ImportStatus.optional() });

/** `/contacts/imports` as in Resend's API reference: CSV uploads run in the background, their list and records. */
export function contactImportRoutes(deps: ContactImportRouteDeps): Router {
  const router = Router();
  const uploads = createSlots(CONCURRENT_UPLOADS);
  route(router, '/contacts/imports', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const release = await uploads.acquire();
      // Held until the answer is sent: the file is in memory that long.
      res.once('close', release);
      const upload = await readUpload(req);
      if (!upload.file) throw missingField('file');
      const fields = parseInput(UploadFields, jsonFields(upload.fields));
      const id = await createContactImport(deps, teamId, {
        file: upload.file,
        onConflict: fields.on_conflict,
        columnMap: fields.column_map,
        segmentIds: fields.segments,
        topics: fields.topics,
      });
      res.status(201).json({ object: 'contact_import', id });
    },
    get: async (req, res) => {
      const page = parseInput(PaginationQuery, req.query);
      const { status } = parseInput(ListQuery, { status: req.query.status });
      const result = await pageOfContactImports(deps, teamOf(res), status, page);
      res.json({ ...result, data: result.data.map((record) => item(record)) });
    },
  });
  route(router, '/contacts/imports/:id', {
    get: async (req, res) => {
      const { record, failures } = await getContactImport(deps, teamOf(res), req.params.id ?? '');
      res.json(item(record, failures));
    },
  });
  return router;
}

/**
 * The reference's contact import, with two fields of ours: `error` (why a failed import failed) and, on
 * GET of one import, `errors`: its first failed rows (MAX_RECORDED_FAILURES), each with its row number
 * (data rows from 1) and why.
 */
function item(record: ContactImportRecord, failures?: readonly ImportFailure[]) {
  return {
    object: 'contact_import',
    id: record.id,
    status: record.status,
    created_at: formatTimestamp(record.created_at),
    completed_at: record.completed_at ? formatTimestamp(record.completed_at) : null,
    counts: {
      total: record.total,
      created: record.created,
      updated: record.updated,
      skipped: record.skipped,
      failed: record.failed,
    },
    error: record.error,
    ...(failures ? { errors: failures.map((failure) => ({ row: failure.row_number, reason: failure.reason })) } : {}),
  };
}

/** The JSON-encoded form fields decoded (`on_conflict` is plain text); invalid JSON is refused naming the field. */
function jsonFields(fields: Record<string, string>): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  if (fields.on_conflict !== undefined) decoded.on_conflict = fields.on_conflict;
  for (const name of ['column_map', 'segments', 'topics']) {
    const text = fields[name];
    if (text === undefined || text.trim() === '') continue;
    try {
      decoded[name] = JSON.parse(text);
    } catch {
      throw validationError(
        `Invalid \`${name}\`: it must be a JSON-encoded ${name === 'column_map' ? 'object' : 'array'}.`,
      );
    }
  }
  return decoded;
}

type Upload = { file: Buffer | undefined; fields: Record<string, string> };

/**
 * A multipart/form-data body: the `file` part (at most CONTACT_IMPORT_FILE_LIMIT_BYTES, else 413) and the
 * text fields. Any other body has no file.
 */
async function readUpload(req: Request): Promise<Upload> {
  if (!req.is('multipart/form-data')) return { file: undefined, fields: {} };
  return new Promise<Upload>((resolve, reject) => {
    const fields: Record<string, string> = {};
    const parts: Buffer[] = [];
    let file: Buffer | undefined;
    let refusal: ApiError | undefined;
    const form = busboy({
      headers: req.headers,
      limits: { fileSize: CONTACT_IMPORT_FILE_LIMIT_BYTES, fieldSize: MAX_FIELD_BYTES, fields: 20, files: 1 },
    });
    form.on('file', (name, stream) => {
      if (name !== 'file') {
        stream.resume();
        return;
      }
      stream.on('data', (data: Buffer) => parts.push(data));
      stream.on('limit', () => {
        refusal = new ApiError(
          413,
          'validation_error',
          `The \`file\` is larger than ${CONTACT_IMPORT_FILE_LIMIT_BYTES / 1024 / 1024} MB.`,
        );
      });
      stream.on('end', () => {
        file = Buffer.concat(parts);
        parts.length = 0;
      });
    });
    form.on('field', (name, value, info) => {
      if (info.valueTruncated)
        refusal = validationError(`The \`${name}\` field is larger than ${MAX_FIELD_BYTES / 1024 / 1024} MB.`);
      fields[name] = value;
    });
    form.on('close', () => (refusal ? reject(refusal) : resolve({ file, fields })));
    form.on('error', () => reject(validationError('The multipart/form-data body could not be read.')));
    // The client (or the gateway, at its body limit) went away mid-body: nothing to store, and not our fault.
    const aborted = () => reject(new ApiError(400, 'validation_error', 'The request was aborted.'));
    req.on('error', aborted);
    req.on('close', () => {
      if (!req.complete) aborted();
    });
    req.pipe(form);
  });
}
