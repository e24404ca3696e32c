import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createLogger } from './logger.ts';
import { addressOf, OUTAGE_REPEAT_MS, outageLog } from './outage-log.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger({ service: 'svc', destination }) };
}

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' });

afterEach(() => {
  jest.useRealTimers();
});

describe('addressOf', () => {
  it('keeps the scheme, host, port and path, and drops the user, password and query', () => {
    expect(addressOf('amqp://guest:secret@127.0.0.1:5999/%2f?heartbeat=10')).toBe('amqp://127.0.0.1:5999/%2f');
    expect(addressOf('postgres://postgres:pw@db.internal:5432/postline')).toBe('postgres://db.internal:5432/postline');
    expect(addressOf('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(addressOf('not a url')).toBe('(an unparsable URL)');
  });
});

describe('outageLog', () => {
  it('logs one line naming the dependency, the address, why and how to start it, then one a minute', () => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    const { lines, logger } = capture();
    const outage = outageLog(logger, 'RabbitMQ', 'amqp://guest:secret@127.0.0.1:5901');
    for (let i = 0; i < 30; i++) {
      outage.failed(refused);
      jest.advanceTimersByTime(1_000);
    }
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        dependency: 'RabbitMQ',
        address: 'amqp://127.0.0.1:5901',
        reason: 'ECONNREFUSED',
        msg:
          'cannot connect to RabbitMQ at amqp://127.0.0.1:5901 (ECONNREFUSED): start RabbitMQ ' +
          '(docker compose up -d rabbitmq) or set AMQP_URL to where it runs; retrying until it answers',
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret');

    jest.advanceTimersByTime(OUTAGE_REPEAT_MS);
    outage.failed(refused);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      level: 'warn',
      down_s: 90,
      failures: 31,
      msg: 'still cannot connect to RabbitMQ at amqp://127.0.0.1:5901 after 90 s (ECONNREFUSED); retrying',
    });
    expect(lines[1]).not.toHaveProperty('err');

    outage.recovered();
    outage.recovered();
    expect(lines.slice(2)).toEqual([
      expect.objectContaining({ level: 'info', msg: 'RabbitMQ at amqp://127.0.0.1:5901 answers again' }),
    ]);
    // A new outage is announced as the first was.
    outage.failed(new Error('Handshake terminated by server: 403 (ACCESS-REFUSED)\nmore'));
    expect(lines[3]).toMatchObject({ reason: 'Handshake terminated by server: 403 (ACCESS-REFUSED)' });
    expect(String(lines[3]?.msg)).toMatch(/^cannot connect to RabbitMQ at /);
  });

  it('is one per dependency and address in a process, so parts reaching one server report it once', () => {
    const first = capture();
    const second = capture();
    const url = 'postgres://postgres@127.0.0.1:5902/postline';
    outageLog(first.logger, 'PostgreSQL', url).failed(refused);
    outageLog(second.logger, 'PostgreSQL', url).failed(refused);
    expect(first.lines).toHaveLength(1);
    expect(second.lines).toHaveLength(0);
    expect(first.lines[0]?.msg).toContain('start PostgreSQL (docker compose up -d postgres) or set DATABASE_URL');
  });
});
