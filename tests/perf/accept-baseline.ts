// The accept benchmark's baseline, run as its own process: express + one Postgres transaction inserting
// a row and an outbox row, the least any service that accepts an email durably must do.
//
//   DATABASE_URL=… PORT=… node tests/perf/accept-baseline.ts
import express from 'express';
import pg from 'pg';
import { randomUUID } from 'node:crypto';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
await pool.query(`create table if not exists baseline_emails (id uuid primary key, team_id uuid not null, body jsonb not null, created_at timestamptz not null default now());
  create table if not exists baseline_outbox (id uuid primary key, routing_key text not null, envelope jsonb not null, created_at timestamptz not null default now())`);

const app = express();
app.use(express.json({ limit: '1mb' }));
app.post('/emails', async (req, res) => {
  const id = randomUUID();
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('insert into baseline_emails (id, team_id, body) values ($1, $2, $3)', [
      id,
      randomUUID(),
      JSON.stringify(req.body),
    ]);
    await client.query('insert into baseline_outbox (id, routing_key, envelope) values ($1, $2, $3)', [
      randomUUID(),
      'email.sent',
      JSON.stringify({ id }),
    ]);
    await client.query('commit');
    res.json({ id });
  } catch (err) {
    await client.query('rollback');
    res.status(500).json({ statusCode: 500, name: 'application_error', message: String(err) });
  } finally {
    client.release();
  }
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
