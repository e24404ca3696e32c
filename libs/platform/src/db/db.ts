import { createHash } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Logger } from '../logger/logger.ts';
import { knownOutageLog, outageLog } from '../logger/outage-log.ts';

export type DbOptions = {
  url: string;
  /** The service's own schema; every unqualified table name resolves there (search_path). */
  schema: string;
  max?: number;
  applicationName?: string;
  /**
   * How long a caller waits for a connection (the pool busy, or the database unreachable: a connect that
   * hangs, a network that drops packets) before the query fails as unavailable, which the HTTP edge answers
   * 503. Default 5 s.
   */
  connectionTimeoutMs?: number;
  /** Where a lost connection is reported; without one it is dropped silently (the next query reports it). */
  logger?: Logger;
};

/** DbOptions.connectionTimeoutMs when not given. */
export const DB_CONNECTION_TIMEOUT_MS = 5_000;

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
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? DB_CONNECTION_TIMEOUT_MS,
    // Finds a dead idle connection (the peer gone without a FIN) instead of handing it out.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  watchConnectionErrors(pool, opts.logger);
  // Registered now, so that every part of the service reports an unreachable database through it.
  if (opts.logger) outageLog(opts.logger, 'PostgreSQL', opts.url);
  pool.on('connect', prepareMarkedStatements);
  return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), pool };
}

/**
 * A lost database connection is an outage to ride out, never a crash. node-postgres emits 'error' on a
 * client whose connection breaks while no query runs on it; the pool listens only on its idle clients, so
 * one checked out (a transaction between statements, kysely holding it) would throw the error at the
 * process. Every client gets a listener of its own from its first connect: the client is then unusable,
 * its next query fails as unavailable, and the pool drops it on release instead of reusing it.
 */
function watchConnectionErrors(pool: pg.Pool, logger: Logger | undefined): void {
  const lost = (err: Error) => logger?.warn({ err: err.message }, 'database connection lost');
  pool.on('error', lost);
  pool.on('connect', (client) => client.on('error', lost));
}

/**
 * Put anywhere in the text of a hot statement whose text never varies (parameters carry every value, lists
 * go in as arrays or JSON): each connection then parses and plans it once, as a named prepared statement,
 * instead of on every call. Only for a bounded set of texts, since a connection keeps each one it prepared.
 *
 * Only for a statement whose plan cannot turn bad as its tables grow (inserts, a table read by its key
 * alone, as below): after five calls Postgres keeps a generic plan, made for the tables as they were
 * then, until they are next analyzed, which without autovacuum never happens. A join of a batch (a JSON
 * record set, unnest) to a growing table is left unmarked, so that it is planned on every call: a
 * recipients update planned while the table was young keeps scanning it, 20–50 ms a statement instead of
 * 1 ms. Each such statement has a test that grows its table after planning.
 *
 * @example
 * await sql`select ${PREPARED} id from emails where id = any(${ids}::uuid[])`.execute(db);
 */
export const PREPARED = sql.raw('/*prepared*/');
const PREPARED_MARK = '/*prepared*/';
const preparedNames = new Map<string, string>();

function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (!name) {
    name = `p_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * Sends marked statements as named ones. A prepared statement whose result type a migration changed
 * (`cached plan must not change result type`) fails once on that connection, which is then closed, so the
 * pool's next connection prepares it afresh.
 */
function prepareMarkedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (args.length > 2 || typeof text !== 'string' || !text.includes(PREPARED_MARK)) return query(...args);
    return (query({ name: preparedName(text), text, values }) as Promise<unknown>).catch((err: unknown) => {
      if ((err as { code?: string }).code === '0A000')
        setImmediate(() => void (client as unknown as pg.Client).end().catch(() => undefined));
      throw err;
    });
  };
}

/**
 * The database could not be reached or dropped the connection (refused, timed out, its host unknown or
 * unreachable, SQLSTATE class 08, shutting down, too many connections): a temporary condition of our own
 * dependency, not a fault of the statement or its data.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    return (
      [
        'ECONNREFUSED',
        'ECONNRESET',
        'ETIMEDOUT',
        'EPIPE',
        'ENOTFOUND',
        'EAI_AGAIN',
        'EHOSTUNREACH',
        'ENETUNREACH',
        '57P01',
        '57P02',
        '57P03',
        '53300',
      ].includes(code) || code.startsWith('08')
    );
  }
  // node-postgres gives no code for a connection that ended under a query, nor for a client whose
  // connection broke ("... is not queryable"), which is what a rollback on a dead connection throws.
  return (
    typeof message === 'string' &&
    /^Connection terminated|timeout exceeded when trying to connect|is not queryable|Client was closed/i.test(message)
  );
}

/**
 * For a loop whose pass failed: an unavailable database (isDatabaseUnavailable) is reported through the
 * process's PostgreSQL outage log (one clear line, then one a minute) and true is returned; for any other
 * error, or in a process without a database logger, false, and the caller logs the error as before.
 *
 * @example
 * catch (err) { if (!reportDatabaseOutage(err)) log.error({ err }, 'sweep failed'); }
 */
export function reportDatabaseOutage(err: unknown): boolean {
  const outage = isDatabaseUnavailable(err) ? knownOutageLog('PostgreSQL') : undefined;
  outage?.failed(err);
  return outage !== undefined;
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
