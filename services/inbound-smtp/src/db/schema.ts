import type { MessagingTables } from '@postline/platform';
import type { DmarcReportTables } from './dmarc-report-tables.ts';
import type { ReceivingTables } from './receiving-tables.ts';
import type { ReturnPathTables } from './return-path-tables.ts';

/**
 * Only the inbound-smtp's own tables: the outbox and inbox, the received emails with their attachments and
 * raw MIME and the read model of domains (receiving-tables.ts), and the mail to return-path domains
 * (return-path-tables.ts), and the DMARC aggregate reports of the teams' domains
 * (dmarc-report-tables.ts). Another service's tables cannot be typed here.
 */
export type InboundDb = MessagingTables & ReceivingTables & ReturnPathTables & DmarcReportTables;
