import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { infraFromEnv } from './infra.ts';

export type TestDatabase = { url: string; name: string; drop: () => Promise<void> };

/**
 * A fresh database for one test file, dropped afterwards: tests isolate by data, not by servers. Empty, or
 * a copy of `template` (a database nobody is connected to).
 */
export async function createTestDatabase(prefix = 'pltest', opts: { template?: string } = {}): Promise<TestDatabase> {
  const base = new URL(infraFromEnv().databaseUrl);
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`create database "${name}"${opts.template ? ` template "${opts.template}"` : ''}`);
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A unique lowercase name for broker and Redis prefixes so test files never see each other's traffic. */
export function uniqueName(prefix = 't'): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/**
 * The sequential scans Postgres has counted on each of `tables` in `schema`, by table name, for a test that
 * a statement probes an index rather than scanning a table that has grown. `pinned` must be a pool of one
 * connection, the one the statements ran on: its statistics are flushed first (other backends' reach the
 * view only a second or more later, or as they exit). Building an index counts as a sequential scan of its
 * table: migrate on a pool closed before the first reading.
 */
export async function sequentialScans<DB>(
  pinned: Kysely<DB>,
  schema: string,
  tables: string[],
): Promise<Record<string, number>> {
  await sql`select pg_stat_force_next_flush()`.execute(pinned);
  const { rows } = await sql<{ relname: string; seq_scan: string }>`select relname, seq_scan from pg_stat_user_tables
    where schemaname = ${schema} and relname = any(${tables}::text[])`.execute(pinned);
  return Object.fromEntries(rows.map((r) => [r.relname, Number(r.seq_scan)]));
}
