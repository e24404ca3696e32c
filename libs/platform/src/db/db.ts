import { promises as fs } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { FileMigrationProvider, Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import { createLogger, type Logger } from '../logger/logger.ts';

export type DbOptions = {
  url: string;
  /** The service's own schema; every unqualified table name resolves there (search_path). */
  schema: string;
  max?: number;
  applicationName?: string;
};

const SCHEMA_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * A kysely instance whose connections resolve unqualified names in the service's own schema only, so
 * another service's tables cannot be reached by accident. `DB` lists only this service's tables.
 */
export function createDb<DB>(opts: DbOptions): { db: Kysely<DB>; pool: pg.Pool } {
  if (!SCHEMA_NAME.test(opts.schema)) throw new Error(`invalid schema name ${opts.schema}`);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? opts.schema,
    options: `-c search_path=${opts.schema}`,
  });
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), pool };
}

/** Readiness probe: one round trip. */
export async function pingDb<DB>(db: Kysely<DB>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

/** Creates the database named in `url` when it does not exist (connects to the `postgres` database). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`unsupported database name ${name}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`create database "${name}"`);
      } catch (err) {
        // Another process created it between the check and the create.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

/**
 * Applies every migration in `folder` (files `<yyyyMMddHHmm>_<name>.ts`) to the service's schema, creating
 * the schema first. Safe to run from several processes: kysely takes an advisory lock.
 */
export async function migrateToLatest<DB>(
  db: Kysely<DB>,
  opts: { schema: string; folder: string; logger?: Logger },
): Promise<void> {
  await sql`create schema if not exists ${sql.id(opts.schema)}`.execute(db);
  const migrator = new Migrator({
    db: db as Kysely<unknown>,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: opts.folder }),
    migrationTableSchema: opts.schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  for (const r of results ?? []) {
    opts.logger?.info({ migration: r.migrationName, status: r.status }, 'migration');
  }
  if (error) throw error instanceof Error ? error : new Error('migration failed', { cause: error });
}

/**
 * The body of every service's `migrate.ts` one-shot: create the database if missing, apply the service's
 * migrations, close.
 */
export async function runMigrateCommand(opts: {
  service: string;
  url: string;
  schema: string;
  level: string;
  migrate: (db: Kysely<unknown>, logger: Logger) => Promise<void>;
}): Promise<void> {
  const logger = createLogger({ service: `${opts.service}-migrate`, level: opts.level });
  await ensureDatabase(opts.url);
  const { db } = createDb<unknown>({ url: opts.url, schema: opts.schema, max: 1, applicationName: `${opts.service}-migrate` });
  try {
    await opts.migrate(db, logger);
    logger.info('migrations applied');
  } finally {
    await db.destroy();
  }
}
