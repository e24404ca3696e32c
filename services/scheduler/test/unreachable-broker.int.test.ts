// A service started where RabbitMQ does not answer, as a newcomer's `npm start` without it: one line
// naming the broker, the address tried and how to start it; readiness 503 while it keeps trying; and a
// clean stop. The scheduler stands for every service on the platform's runtime.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDb } from '@postline/platform';
import { createTestDatabase, freePort, waitFor, type TestDatabase } from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase('sched_nobroker');
  const { db } = createDb({ url: database.url, schema: SCHEMA });
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
});

afterAll(async () => {
  await database?.drop();
});

describe('a scheduler whose broker does not answer', () => {
  it('says so in one line with the address and how to start it, answers 503 on /readyz, and exits 0 on SIGTERM', async () => {
    // Nothing listens on a port just freed: every connect attempt is refused.
    const brokerPort = await freePort();
    const httpPort = await freePort();
    const output: string[] = [];
    const child = spawn(process.execPath, [MAIN], {
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'debug',
        DATABASE_URL: database.url,
        AMQP_URL: `amqp://guest:not-to-be-logged@127.0.0.1:${brokerPort}`,
        BROKER_PREFIX: `nobroker${brokerPort}`,
        HTTP_PORT: String(httpPort),
        SHUTDOWN_TIMEOUT_MS: '5000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => output.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
    // 'close', not 'exit': the exit can be reported before the last lines written to stdout are read.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    type Entry = { level: string; msg: string; err?: unknown; dependency?: string; address?: string };
    // Whole lines only; anything that is not a log entry (a stack trace printed raw) counts as an error.
    const entries = () =>
      output
        .join('')
        .split('\n')
        .slice(0, -1)
        .map((line): Entry => {
          try {
            return JSON.parse(line) as Entry;
          } catch {
            return { level: 'fatal', msg: line };
          }
        });
    // What an operator sees at the default level (info and above); each attempt is at debug.
    const shown = () => entries().filter((e) => !['trace', 'debug'].includes(e.level));
    const aboutBroker = () => shown().filter((e) => e.msg.includes('RabbitMQ'));
    const attempts = () => entries().filter((e) => e.msg === 'RabbitMQ connection attempt failed').length;

    try {
      await waitFor('the line about the broker', () => aboutBroker().length > 0, 30_000);
      expect(aboutBroker()[0]).toMatchObject({
        level: 'warn',
        dependency: 'RabbitMQ',
        address: `amqp://127.0.0.1:${brokerPort}`,
        msg:
          `cannot connect to RabbitMQ at amqp://127.0.0.1:${brokerPort} (ECONNREFUSED): start RabbitMQ ` +
          '(docker compose up -d rabbitmq) or set AMQP_URL to where it runs; retrying until it answers',
      });
      // It keeps trying, without a line for each attempt.
      await waitFor('more connect attempts', () => attempts() >= 4, 30_000);
      const ready = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ ready: false, checks: { rabbitmq: false, postgres: true } });

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(aboutBroker()).toHaveLength(1);
      // No stack traces: no error logged at all at the levels shown, at start, while waiting or at the stop.
      expect(shown().filter((e) => e.err !== undefined || ['error', 'fatal'].includes(e.level))).toEqual([]);
      expect(output.join('')).not.toContain('not-to-be-logged');
      expect(shown().at(-1)?.msg).toBe('stopped');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
