import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createTestDatabase, waitFor, type TestDatabase } from '@postline/testing';
import { createDb, ensureDatabase, migrateToLatest, newId, paginate, pingDb, PREPARED } from '../src/index.ts';

type ItemsDb = { items: { id: string; team_id: string } };

let database: TestDatabase;
let a: Kysely<ItemsDb>;
let b: Kysely<ItemsDb>;
const folder = mkdtempSync(join(tmpdir(), 'migrations-'));

beforeAll(async () => {
  database = await createTestDatabase('dbtest');
  writeFileSync(
    join(folder, '202611210700_items.ts'),
    `export async function up(db) {
       await db.schema.createTable('items').addColumn('id', 'uuid', (c) => c.primaryKey()).addColumn('team_id', 'uuid', (c) => c.notNull()).execute();
     }`,
  );
  a = createDb<ItemsDb>({ url: database.url, schema: 'svc_a' }).db;
  b = createDb<ItemsDb>({ url: database.url, schema: 'svc_b' }).db;
  await migrateToLatest(a, { schema: 'svc_a', folder });
});
afterAll(async () => {
  await a.destroy();
  await b.destroy();
  await database.drop();
});

describe('db', () => {
  it('creates a missing database once, and is a no-op after', async () => {
    const url = new URL(database.url);
    url.pathname = `/${database.name}_extra`;
    await ensureDatabase(url.toString());
    await ensureDatabase(url.toString());
    const extra = createDb<ItemsDb>({ url: url.toString(), schema: 'x' }).db;
    expect(await pingDb(extra)).toBe(true);
    await extra.destroy();
    await sql`drop database ${sql.id(`${database.name}_extra`)} with (force)`.execute(a);
  });

  it("migrates into the service's own schema, re-runs as a no-op, and hides other schemas' tables", async () => {
    await migrateToLatest(a, { schema: 'svc_a', folder });
    await a.insertInto('items').values({ id: newId(), team_id: newId() }).execute();
    await migrateToLatest(b, { schema: 'svc_b', folder: mkdtempSync(join(tmpdir(), 'empty-')) });
    await expect(b.selectFrom('items').selectAll().execute()).rejects.toMatchObject({ code: '42P01' });
  });

  it('pages newest first by UUIDv7 id without OFFSET', async () => {
    const team = newId();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = newId();
      ids.push(id);
      await a.insertInto('items').values({ id, team_id: team }).execute();
    }
    const q = () => a.selectFrom('items').select('id').where('team_id', '=', team);
    const first = await paginate(q(), { limit: 2 });
    expect(first.data.map((r) => r.id)).toEqual([ids[4], ids[3]]);
    expect(first.has_more).toBe(true);
    const next = await paginate(q(), { limit: 2, after: ids[3] });
    expect(next.data.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    const last = await paginate(q(), { limit: 2, after: ids[1] });
    expect(last).toEqual({ object: 'list', has_more: false, data: [{ id: ids[0] }] });
    const back = await paginate(q(), { limit: 2, before: ids[2] });
    expect(back.data.map((r) => r.id)).toEqual([ids[4], ids[3]]);
    expect((await paginate(q(), {})).data).toHaveLength(5);
    // Without a limit, a page holds 20.
    for (let i = 0; i < 16; i++) await a.insertInto('items').values({ id: newId(), team_id: team }).execute();
    const defaultPage = await paginate(q(), {});
    expect(defaultPage.data).toHaveLength(20);
    expect(defaultPage.has_more).toBe(true);
  });

  it('runs a statement marked PREPARED as a named prepared statement, planned once per connection', async () => {
    const { db: one } = createDb<ItemsDb>({ url: database.url, schema: 'svc_a', max: 1 });
    try {
      const team = newId();
      await one.insertInto('items').values({ id: newId(), team_id: team }).execute();
      const marked = () => sql<{ id: string }>`select ${PREPARED} id from items where team_id = ${team}`.execute(one);
      const plain = () => sql<{ id: string }>`select id from items where team_id = ${team}`.execute(one);
      const prepared = async () =>
        (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(one)).rows.map(
          (r) => r.statement,
        );
      expect((await plain()).rows).toHaveLength(1);
      expect(await prepared()).toEqual([]);
      expect((await marked()).rows).toHaveLength(1);
      expect((await marked()).rows).toHaveLength(1);
      expect(await prepared()).toEqual([expect.stringContaining('/*prepared*/ id from items')]);
    } finally {
      await one.destroy();
    }
  });

  it('recovers when a migration changes the result of a prepared statement: one failure, then a fresh connection', async () => {
    const { db: one } = createDb<ItemsDb>({ url: database.url, schema: 'svc_a', max: 1 });
    try {
      await sql`create table wide (id int)`.execute(one);
      await sql`insert into wide values (1)`.execute(one);
      const marked = () => sql<Record<string, unknown>>`select ${PREPARED} * from wide`.execute(one);
      expect((await marked()).rows).toEqual([{ id: 1 }]);
      await sql`alter table wide add column extra text`.execute(one);
      await expect(marked()).rejects.toMatchObject({ code: '0A000' });
      await waitFor('the next statement to prepare on a new connection', async () => {
        try {
          return (await marked()).rows.length === 1;
        } catch {
          return false;
        }
      });
      expect((await marked()).rows).toEqual([{ id: 1, extra: null }]);
    } finally {
      await one.destroy();
    }
  });
});
