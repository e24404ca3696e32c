import type { MessagingTables } from '@postline/platform';

/** Only the webhook-dispatcher's own tables (webhook endpoints, events and attempts); another service's tables cannot be typed here. */
export type DispatcherDb = MessagingTables;
