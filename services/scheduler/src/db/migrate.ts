import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { migrateToLatest, type Logger } from '@postline/platform';
import { SCHEMA } from '../config.ts';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url));

export async function migrate<DB>(db: Kysely<DB>, logger?: Logger): Promise<void> {
  await migrateToLatest(db, { schema: SCHEMA, folder: MIGRATIONS_FOLDER, logger });
}
