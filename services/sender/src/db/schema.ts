import type { MessagingTables } from '@postline/platform';

/** Only the sender's own tables (emails, recipients, delivery attempts, templates, contacts, segments, topics, broadcasts, suppressions); another service's tables cannot be typed here. */
export type SenderDb = MessagingTables;
