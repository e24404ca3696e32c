import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from './logger.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, destination };
}

describe('logger', () => {
  it('writes one JSON object a line with the service and level names', () => {
    const { lines, destination } = capture();
    createLogger({ service: 'sender', destination }).child({ request_id: 'r1' }).info({ n: 1 }, 'hello');
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({ service: 'sender', level: 'info', request_id: 'r1', n: 1, msg: 'hello' });
    expect(typeof line.time).toBe('string');
  });

  it('never writes secrets', () => {
    const { lines, destination } = capture();
    createLogger({ service: 'gw', destination }).info(
      {
        req: { headers: { authorization: 'Bearer pl_secret1' } },
        body: { token: 'pl_secret2', signing_secret: 'whsec_secret3', password: 'secret4' },
        dkim_private_key_encrypted: 'secret5',
      },
      'request',
    );
    const out = lines.join('');
    for (const s of ['pl_secret1', 'pl_secret2', 'whsec_secret3', 'secret4', 'secret5']) expect(out).not.toContain(s);
    expect(out).toContain('[redacted]');
  });
});
