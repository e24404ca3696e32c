import busboy from 'busboy';
import { Router, type Request } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, CONTACT_IMPORT_FILE_LIMIT_BYTES, PaginationQuery } from '@postline/contracts';
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
import { createContactImport, getContactImport, pageOfContactImports } from '../use-cases/contact-imports.ts';

export type ContactImportRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

/** Uploads read at once by one process: each holds its file in memory until it is stored. */
const CONCURRENT_UPLOADS = 2;
/** The form fields besides the file are small JSON texts. */
const MAX_FIELD_BYTES = 1024 * 1024;

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
      const fields = parseInput(ApiRequests.ContactImportForm, { ...upload.fields, file: upload.file });
      const id = await createContactImport(deps, teamId, {
        file: upload.file,
        onConflict: fields.on_conflict,
        columnMap: fields.column_map && columnMapRequest(fields.column_map),
        segmentIds: fields.segments,
        topics: fields.topics,
      });
      res.status(201).json({ object: 'contact_import', id });
    },
    get: async (req, res) => {
      const page = parseInput(PaginationQuery, req.query);
      const { status } = parseInput(ApiRequests.ContactImportListQuery, { status: req.query.status });
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

/** The request's column map as the import's rules take it: the fields, and the properties by key. */
function columnMapRequest(map: ApiRequests.ContactImportColumnMap): ColumnMapRequest {
  const fields: ColumnMapRequest['fields'] = {};
  const properties: ColumnMapRequest['properties'] = {};
  for (const [key, value] of Object.entries(map)) {
    if (value === null || value === undefined || key === 'properties' || typeof value !== 'string') continue;
    if ((IMPORT_FIELDS as readonly string[]).includes(key)) fields[key as keyof ColumnMapRequest['fields']] = value;
    else properties[key] = { column: value };
  }
  return { fields, properties: { ...properties, ...map.properties } };
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
