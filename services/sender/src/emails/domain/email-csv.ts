// An email as a line of the list's CSV export (RFC 4180: fields quoted when they hold a comma, a quote or a
// line break, quotes doubled, CRLF line ends). A field a spreadsheet would read as a formula is prefixed
// with a quote (OWASP's CSV injection advice): subjects and addresses are other people's text.

/** What a line shows of an email (an `emails` row has these and more). */
export type CsvEmail = {
  id: string;
  created_at: Date;
  from_header: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  subject: string;
  last_event: string;
  scheduled_at: Date | null;
  message_id: string;
  tags: { name: string; value: string }[];
};

const COLUMNS = [
  'id',
  'created_at',
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'last_event',
  'scheduled_at',
  'message_id',
  'tags',
] as const;

/** The header line, after a UTF-8 byte-order mark: spreadsheets then read names and subjects as UTF-8. */
export const EMAIL_CSV_HEADER = `\uFEFF${COLUMNS.join(',')}\r\n`;

/** One field, escaped for CSV and defused for spreadsheets. */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function emailCsvLine(email: CsvEmail): string {
  const fields = [
    email.id,
    email.created_at.toISOString(),
    email.from_header,
    email.to_addresses.join(', '),
    email.cc_addresses.join(', '),
    email.bcc_addresses.join(', '),
    email.subject,
    email.last_event,
    email.scheduled_at ? email.scheduled_at.toISOString() : '',
    email.message_id,
    email.tags.map((t) => `${t.name}=${t.value}`).join(';'),
  ];
  return `${fields.map(csvField).join(',')}\r\n`;
}
