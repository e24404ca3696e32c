import type { MessagingTables } from '@postline/platform';

/** Only the inbound-smtp's own tables (received emails, attachments and raw MIME); another service's tables cannot be typed here. */
export type InboundDb = MessagingTables;
