import type { MessagingTables } from '@postline/platform';

/** Only the domain-verifier's own tables (domains, DNS records, DKIM keys and check history); another service's tables cannot be typed here. */
export type DomainsDb = MessagingTables;
