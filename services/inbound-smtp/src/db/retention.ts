// What of the inbound-smtp's tables ages out with the team's retention (docs/retention.md lists every table
// and its rule).
import type { RetainedTable } from '@postline/platform';

export const INBOUND_RETAINED_TABLES: readonly RetainedTable[] = [
  // A received email with its attachments; its raw message once no email of the same SMTP transaction (one
  // per recipient domain's team) refers to it.
  {
    table: 'received_emails',
    time: 'created_at',
    children: [{ table: 'received_attachments', column: 'email_id' }],
    orphans: { table: 'received_raw_messages', key: 'id', column: 'raw_id' },
  },
  // The record of a bounce or complaint received at a return-path address.
  { table: 'return_path_mail', time: 'received_at' },
];
