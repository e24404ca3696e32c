// What of the webhook-dispatcher's tables ages out with the team's retention (docs/retention.md lists every
// table and its rule).
import { sql } from 'kysely';
import type { RetainedTable } from '@postline/platform';

export const DISPATCHER_RETAINED_TABLES: readonly RetainedTable[] = [
  // An event with its attempts, once settled (delivered or failed); one still being retried is kept.
  {
    table: 'webhook_events',
    time: 'created_at',
    where: () => sql`status in ('success', 'failed')`,
    children: [{ table: 'webhook_attempts', column: 'event_id' }],
  },
];
