import type { Kysely } from 'kysely';
import { createMessagingTablesV1 } from '@postline/platform';

// Frozen: never edit an applied migration; add a new one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await createMessagingTablesV1(db);
}
