import { ApiRequests } from '@postline/contracts';
import { checkValue, contactEmail, unknownProperty, type PropertyDefinition, type PropertyValue } from './contacts.ts';
import type { Refusal } from '../../message/index.ts';

// The rules of a CSV contact import: which column fills which field, what a row says, and how the rows of
// one chunk are counted. A row that breaks a rule fails alone, with its reason; it never stops the import.

/**
 * Failed rows kept per import, the first ones in file order (the `failed` count is exact whatever their
 * number): what GET /contacts/imports/{id} returns as `errors`.
 */
export const MAX_RECORDED_FAILURES = 1000;

export type OnConflict = 'upsert' | 'skip';

export const IMPORT_FIELDS = ApiRequests.CONTACT_IMPORT_FIELDS;
export type ImportField = (typeof IMPORT_FIELDS)[number];

/**
 * The request's `column_map`: a CSV column per contact field, and per property key (`type`, as the SDK
 * may send it, must then be the property's own type).
 */
export type ColumnMapRequest = {
  fields: Partial<Record<ImportField, string>>;
  properties: Record<string, { column: string; type?: string }>;
};

/**
 * Where each value comes from, as stored with the import: a column name (as in the header) per contact
 * field and per property ID. Properties go by id, as contacts keep their values, so that a property key can
 * never be mistaken for a field name.
 */
export type ColumnMap = Record<string, string>;

/** A row as it will be written: values present in the row only (null and absent leave a value as it is). */
export type ImportedContact = {
  email: string;
  first_name: string | null;
  last_name: string | null;
  unsubscribed: boolean | null;
  /** By property id. */
  properties: Record<string, PropertyValue>;
};

export type RowResult = { ok: true; contact: ImportedContact } | { ok: false; reason: string };

/** The header names of the fields, compared without case, spaces, `_` or `-` (`First Name` is `first_name`). */
/**
 * The import's column map from the file's header: columns named like a field or a property key (the exact
 * key first, then without case) fill it, other columns are ignored, and the request's `column_map`
 * overrides by field. Refused when `column_map` names a column the header lacks, a property the team does
 * not have or of another type, or when no column gives the email.
 */
export function resolveColumnMap(
  header: readonly string[],
  request: ColumnMapRequest | undefined,
  definitions: readonly PropertyDefinition[],
): { ok: true; map: ColumnMap } | { ok: false; refusal: Refusal } {
  const map: ColumnMap = {};
  for (const column of [...header].reverse()) {
    // Reversed, so that the first of two columns with the same meaning wins.
    const field = ApiRequests.importFieldOfHeader(column);
    if (field) map[field] = column;
  }
  for (const definition of definitions) {
    const column =
      header.find((name) => name === definition.key) ??
      header.find((name) => name.toLowerCase() === definition.key.toLowerCase());
    if (column !== undefined && !Object.values(map).includes(column)) map[definition.id] = column;
  }
  const missingColumn = (path: string, column: string): Refusal => ({
    name: 'validation_error',
    message: `The column \`${column}\` of \`column_map.${path}\` is not in the file's header.`,
  });
  for (const [field, column] of Object.entries(request?.fields ?? {})) {
    if (!header.includes(column)) return { ok: false, refusal: missingColumn(field, column) };
    map[field] = column;
  }
  for (const [key, mapping] of Object.entries(request?.properties ?? {})) {
    const definition = definitions.find((candidate) => candidate.key === key);
    if (!definition) return { ok: false, refusal: unknownProperty(key) };
    if (mapping.type !== undefined && mapping.type !== definition.type) {
      return {
        ok: false,
        refusal: {
          name: 'validation_error',
          message: `The contact property \`${key}\` is a ${definition.type}, not a ${mapping.type}.`,
        },
      };
    }
    if (!header.includes(mapping.column))
      return { ok: false, refusal: missingColumn(`properties.${key}`, mapping.column) };
    map[definition.id] = mapping.column;
  }
  if (map.email === undefined) {
    return {
      ok: false,
      refusal: {
        name: 'validation_error',
        message: 'The file has no `email` column: name the column of the email addresses in `column_map.email`.',
      },
    };
  }
  return { ok: true, map };
}

/** Column indexes of the fields and properties of a stored column map, for one file's header. */
export type RowReader = {
  width: number;
  fields: Partial<Record<ImportField, number>>;
  properties: { definition: PropertyDefinition; index: number }[];
};

/**
 * The reader of the rows of a file whose header is `header`, for its import's stored map. A property deleted
 * since the import was made is left out; an email column the header lacks is a reason for the import to fail.
 */
export function rowReader(
  header: readonly string[],
  map: ColumnMap,
  definitions: readonly PropertyDefinition[],
): { ok: true; reader: RowReader } | { ok: false; reason: string } {
  const fields: RowReader['fields'] = {};
  for (const field of IMPORT_FIELDS) {
    const column = map[field];
    const index = column === undefined ? -1 : header.indexOf(column);
    if (index >= 0) fields[field] = index;
  }
  if (fields.email === undefined) return { ok: false, reason: 'The file has no `email` column.' };
  const properties = definitions.flatMap((definition) => {
    const column = map[definition.id];
    const index = column === undefined ? -1 : header.indexOf(column);
    return index >= 0 ? [{ definition, index }] : [];
  });
  return { ok: true, reader: { width: header.length, fields, properties } };
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);

/**
 * One data row. Values are trimmed; an empty value is no value. The email must be a bare address
 * (contactEmail); `unsubscribed` is true/false (also yes/no, 1/0); a number property takes a decimal number.
 * A row with more values than the header has columns is refused (an unquoted comma shifted its values).
 */
export function readRow(values: readonly string[], reader: RowReader): RowResult {
  if (values.length > reader.width) {
    return { ok: false, reason: `The row has ${values.length} values but the header has ${reader.width} columns.` };
  }
  const valueOf = (index: number | undefined): string | null => {
    const value = index === undefined ? '' : (values[index] ?? '').trim();
    return value === '' ? null : value;
  };
  for (const index of [...Object.values(reader.fields), ...reader.properties.map((property) => property.index)]) {
    if (valueOf(index)?.includes('\u0000'))
      return { ok: false, reason: 'The row contains a NUL character, which cannot be stored.' };
  }
  const emailText = valueOf(reader.fields.email);
  if (emailText === null) return { ok: false, reason: 'Missing `email`.' };
  const email = contactEmail(emailText);
  if (email === undefined)
    return { ok: false, reason: 'Invalid `email`: it must be an email address such as `name@example.com`.' };
  const unsubscribedText = valueOf(reader.fields.unsubscribed)?.toLowerCase() ?? null;
  let unsubscribed: boolean | null = null;
  if (unsubscribedText !== null) {
    if (!TRUE_WORDS.has(unsubscribedText) && !FALSE_WORDS.has(unsubscribedText)) {
      return { ok: false, reason: 'Invalid `unsubscribed`: it must be true or false.' };
    }
    unsubscribed = TRUE_WORDS.has(unsubscribedText);
  }
  const properties: Record<string, PropertyValue> = {};
  for (const { definition, index } of reader.properties) {
    const text = valueOf(index);
    if (text === null) continue;
    const checked = checkValue(definition.type === 'number' && DECIMAL.test(text) ? Number(text) : text, definition);
    if (!checked.ok) return { ok: false, reason: checked.refusal.message };
    properties[definition.id] = checked.value;
  }
  return {
    ok: true,
    contact: {
      email,
      first_name: valueOf(reader.fields.first_name),
      last_name: valueOf(reader.fields.last_name),
      unsubscribed,
      properties,
    },
  };
}

/**
 * The contacts of a chunk's good rows, one per address (compared without case): a later row of the same
 * address counts once more, as an update under `upsert` (its values over the earlier row's) or as skipped
 * under `skip` (the earlier row stands). `repeats` is how many rows were folded that way.
 */
export function foldRepeatedAddresses(
  rows: readonly ImportedContact[],
  onConflict: OnConflict,
): { contacts: ImportedContact[]; repeats: number } {
  const byAddress = new Map<string, ImportedContact>();
  for (const row of rows) {
    const key = row.email.toLowerCase();
    const earlier = byAddress.get(key);
    if (!earlier) byAddress.set(key, row);
    else if (onConflict === 'upsert') byAddress.set(key, laterOver(earlier, row));
  }
  return { contacts: [...byAddress.values()], repeats: rows.length - byAddress.size };
}

function laterOver(earlier: ImportedContact, later: ImportedContact): ImportedContact {
  return {
    email: earlier.email,
    first_name: later.first_name ?? earlier.first_name,
    last_name: later.last_name ?? earlier.last_name,
    unsubscribed: later.unsubscribed ?? earlier.unsubscribed,
    properties: { ...earlier.properties, ...later.properties },
  };
}

export type ImportCounts = { total: number; created: number; updated: number; skipped: number; failed: number };

/**
 * A chunk's counts: each row is created, updated, skipped or failed. `written` are the folded contacts the
 * statements created or updated; the others among them were skipped (they exist, under `skip`).
 */
export function chunkCounts(input: {
  rows: number;
  failed: number;
  contacts: number;
  repeats: number;
  created: number;
  updated: number;
  onConflict: OnConflict;
}): ImportCounts {
  const repeatsUpdate = input.onConflict === 'upsert' ? input.repeats : 0;
  return {
    total: input.rows,
    created: input.created,
    updated: input.updated + repeatsUpdate,
    skipped: input.contacts - input.created - input.updated + (input.repeats - repeatsUpdate),
    failed: input.failed,
  };
}
