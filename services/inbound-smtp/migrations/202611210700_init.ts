import type { Kysely } from 'kysely';
import { createMessagingTables } from '@postline/platform';

// Frozen: never edit an applied migration; add a new one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await createMessagingTables(db);
}
