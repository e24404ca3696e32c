// Which contact field a CSV column fills by its name alone: the contact import's rule, shared with the
// dashboard's column mapping (a module of its own, without zod, so that the dashboard can import it).

/** The contact fields a CSV import fills (besides the properties). */
export const CONTACT_IMPORT_FIELDS = ['email', 'first_name', 'last_name', 'unsubscribed'] as const;
export type ContactImportField = (typeof CONTACT_IMPORT_FIELDS)[number];

/** The header names that fill a contact field without a `column_map` (any case; spaces, `_` and `-` ignored). */
const IMPORT_FIELD_HEADERS: Record<string, ContactImportField> = {
  email: 'email',
  emailaddress: 'email',
  firstname: 'first_name',
  lastname: 'last_name',
  unsubscribed: 'unsubscribed',
};

/** The contact field a CSV column fills by its name alone, if any. */
export function importFieldOfHeader(column: string): ContactImportField | undefined {
  return IMPORT_FIELD_HEADERS[column.toLowerCase().replace(/[\s_-]/g, '')];
}
