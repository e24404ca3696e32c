import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { FileMigrationProvider, Migrator, sql, type Kysely } from 'kysely';
import { createLogger, type Logger } from '../logger/logger.ts';
import { outageLog } from '../logger/outage-log.ts';
import { createDb, DB_CONNECTION_TIMEOUT_MS, isDatabaseUnavailable } from './db.ts';

/** A service's migrations, bound to its schema and folder; applies them to the database it is given. */
export type ServiceMigrations = {
  <DB>(db: Kysely<DB>, logger?: Logger): Promise<void>;
  readonly schema: string;
};

/** Creates the database named in `url` when it does not exist (connects to the `postgres` database). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`unsupported database name ${name}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({
    connectionString: admin.toString(),
    connectionTimeoutMillis: DB_CONNECTION_TIMEOUT_MS,
  });
  // A connection lost between statements fails the next one; the event itself must not crash the command.
  client.on('error', () => undefined);
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
 * A service's migrations: what its `db/migrate.ts` exports, for its one-shot, its tests and the admin CLI.
 *
 * @example
 * export const migrate = serviceMigrations(SCHEMA, new URL('../../migrations', import.meta.url));
 * await migrate(db);
 */
export function serviceMigrations(schema: string, folder: URL): ServiceMigrations {
  const path = fileURLToPath(folder);
  const migrate = <DB>(db: Kysely<DB>, logger?: Logger) => migrateToLatest(db, { schema, folder: path, logger });
  return Object.assign(migrate, { schema });
}

/**
 * ensureDatabase, tried again every 2 s while the server cannot be reached (`npm start` before Postgres
 * is up, a Job started beside its database): one clear line, then one a minute, as a service does.
 */
async function waitForDatabase(url: string, logger: Logger): Promise<void> {
  const outage = outageLog(logger, 'PostgreSQL', url);
  for (;;) {
    try {
      await ensureDatabase(url);
      outage.recovered();
      return;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      outage.failed(err);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

/**
 * The whole of a service's `migrate.ts` one-shot (k8s Job, compose one-shot, `npm start`): wait for the
 * database server, create the database if missing, apply the service's migrations, close.
 *
 * @example
 * await runMigrateCommand({ service: 'scheduler', config: loadConfig(), migrate });
 */
export async function runMigrateCommand(opts: {
  service: string;
  config: { DATABASE_URL: string; LOG_LEVEL: string };
  migrate: ServiceMigrations;
}): Promise<void> {
  const { service, config, migrate } = opts;
  const logger = createLogger({ service: `${service}-migrate`, level: config.LOG_LEVEL });
  await waitForDatabase(config.DATABASE_URL, logger);
  const { db } = createDb<unknown>({
    url: config.DATABASE_URL,
    schema: migrate.schema,
    max: 1,
    applicationName: `${service}-migrate`,
  });
  try {
    await migrate(db, logger);
    logger.info('migrations applied');
  } finally {
    await db.destroy();
  }
}
