/** Received emails, their attachments and raw MIME, and the read model of domains. */
export type ReceivingTables = Record<never, never>;
