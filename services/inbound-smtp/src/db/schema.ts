import type { MessagingTables } from '@postline/platform';

/**
 * Only the inbound-smtp's own tables, so far the outbox and inbox (received emails, attachments and raw MIME
 * join them when receiving is built); another service's tables cannot be typed here.
 */
export type InboundDb = MessagingTables;
