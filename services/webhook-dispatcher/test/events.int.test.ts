// Recording scheduled (retry) attempts on a real Postgres whose tables never get statistics (no
// autovacuum): once webhook_events has grown, each batch must still probe its primary key, even on a
// connection that first planned the statement while the table was young.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createDb, newId } from '@postline/platform';
import { createTestDatabase, sequentialScans, type TestDatabase } from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { insertEvents, recordScheduledAttempts } from '../src/db/events.ts';
import { migrate } from '../src/db/migrate.ts';
import type { DispatcherDb } from '../src/db/schema.ts';

let database: TestDatabase;
let db: Kysely<DispatcherDb>;
const teamId = newId();
const endpointId = newId();
const msgId = (prefix: string) => `${prefix}_${newId().replace(/-/g, '')}`;

beforeAll(async () => {
  database = await createTestDatabase('dispatcher_events');
  // Set up on a connection closed before the test: building an index counts as a sequential scan of its
  // table, and a backend reports its counts only once idle for a second, or as it exits. Left open, the
  // migrations' five index builds on webhook_events could reach the counters in the middle of the test.
  const setup = createDb<DispatcherDb>({ url: database.url, schema: SCHEMA }).db;
  await migrate(setup);
  // The premise: no statistics, ever. On a busy machine autovacuum could otherwise analyze a table while it
  // is still young, and the plans cached then (the foreign key checks' too) would measure that, not the code.
  for (const table of ['webhook_events', 'webhook_attempts', 'webhook_endpoints'])
    await sql`alter table ${sql.table(table)} set (autovacuum_enabled = false)`.execute(setup);
  await sql`insert into webhook_endpoints (id, team_id, endpoint, events, status, secret_encrypted)
    values (${endpointId}, ${teamId}, 'https://hooks.example.com/in', '{email.sent}', 'enabled', 'sealed')`.execute(
    setup,
  );
  await setup.destroy();
  db = createDb<DispatcherDb>({ url: database.url, schema: SCHEMA }).db;
});

afterAll(async () => {
  await db.destroy();
  await database.drop();
});

describe('recordScheduledAttempts', () => {
  it('probes the events key once the table has grown, with the statement first planned while it was young', async () => {
    const { db: one } = createDb<DispatcherDb>({ url: database.url, schema: SCHEMA, max: 1 });
    const scans = () => sequentialScans(one, SCHEMA, ['webhook_events']);
    const retried = async () => {
      const id = msgId('msg');
      await db.transaction().execute((trx) =>
        insertEvents(trx, [
          {
            id,
            endpoint_id: endpointId,
            team_id: teamId,
            source_event_id: newId(),
            type: 'email.sent',
            body: '{}',
            status: 'attempting',
            attempts_made: 1,
            next_attempt_at: new Date(),
          },
        ]),
      );
      const moved = await recordScheduledAttempts(one, [
        {
          event_id: id,
          attempt: 2,
          status: 'success',
          next_attempt_at: null,
          attempt_id: msgId('att'),
          sent_at: new Date(),
          http_status_code: 200,
          response: 'ok',
          error: null,
          duration_ms: 5,
        },
      ]);
      expect(moved).toEqual([{ id, endpoint_id: endpointId, team_id: teamId }]);
    };
    try {
      // Past the five calls after which a prepared statement may keep a generic plan.
      for (let i = 0; i < 8; i++) await retried();
      await sql`insert into webhook_events (id, endpoint_id, team_id, source_event_id, type, body, status, attempts_made)
        select 'msg_' || replace(gen_random_uuid()::text, '-', ''), ${endpointId}, ${teamId}, gen_random_uuid(), 'email.sent', '{}', 'success', 1
        from generate_series(1, 30000)`.execute(db);
      const before = await scans();
      for (let i = 0; i < 6; i++) await retried();
      expect(await scans()).toEqual(before);
    } finally {
      await one.destroy();
    }
  });
});
