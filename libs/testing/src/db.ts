import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { infraFromEnv } from './infra.ts';

export type TestDatabase = { url: string; name: string; drop: () => Promise<void> };

/** A fresh, empty database for one test file, dropped afterwards: tests isolate by data, not by servers. */
export async function createTestDatabase(prefix = 'pltest'): Promise<TestDatabase> {
  const base = new URL(infraFromEnv().databaseUrl);
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`create database "${name}"`);
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
