import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { createLogger, createMetrics, smtpReply } from '@postline/platform';
import { createInboundMetrics } from '../metrics.ts';
import { createSessionGuard, type OpenConnection } from './session-guard.ts';

const tooMany = (ip: string, max: number) => smtpReply(421, '4.7.0', `Too many connections from ${ip} (${max})`);

function setup(onTimeLimit: (id: string) => void = () => undefined) {
  const metrics = createInboundMetrics(createMetrics('inbound-smtp-test').registry);
  const connections: (OpenConnection & { said: string[]; closed: boolean })[] = [];
  const guard = createSessionGuard({
    listener: 'relay',
    maxSessionsPerIp: 2,
    sessionTimeoutMs: 1_000,
    onTimeLimit,
    tooManySessions: tooMany,
    connections: () => connections,
    initialState: () => ({ inFlight: false }),
    metrics,
    logger: createLogger({ service: 'test', level: 'silent' }),
  });
  const open = async () => (await metrics.sessions.get()).values.find((v) => v.labels.listener === 'relay')?.value;
  const connect = (id: string) => {
    const connection = {
      id,
      said: [] as string[],
      closed: false,
      send(code: number, text: string) {
        connection.said.push(`${code} ${text}`);
      },
      close() {
        connection.closed = true;
      },
    };
    connections.push(connection);
    return connection;
  };
  return { guard, open, connect };
}

describe('createSessionGuard', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('admits sessions up to the cap per address, refuses the next, and admits again once one is released', async () => {
    const { guard, open } = setup();
    expect(guard.admit({ id: 'a', remoteAddress: '10.0.0.1' })).toBeUndefined();
    expect(guard.admit({ id: 'b', remoteAddress: '10.0.0.1' })).toBeUndefined();
    expect(guard.admit({ id: 'c', remoteAddress: '10.0.0.2' })).toBeUndefined();
    expect(guard.admit({ id: 'd', remoteAddress: '10.0.0.1' })).toEqual(tooMany('10.0.0.1', 2));
    expect(await open()).toBe(3);
    guard.release('d'); // refused: never counted
    guard.release('a');
    expect(await open()).toBe(2);
    expect(guard.admit({ id: 'e', remoteAddress: '10.0.0.1' })).toBeUndefined();
    expect(guard.openSessions().sort()).toEqual(['b', 'c', 'e']);
    expect(guard.state('b')).toEqual({ inFlight: false });
    expect(guard.state('a')).toBeUndefined();
  });

  it('calls the time limit of a session still open, and not of one released before it', () => {
    const limited: string[] = [];
    const { guard } = setup((id) => limited.push(id));
    guard.admit({ id: 'a', remoteAddress: '10.0.0.1' });
    guard.admit({ id: 'b', remoteAddress: '10.0.0.1' });
    guard.release('b');
    jest.advanceTimersByTime(1_000);
    expect(limited).toEqual(['a']);
  });

  it('closes a session with its last reply, enhanced code first', () => {
    const { guard, connect } = setup();
    const a = connect('a');
    const b = connect('b');
    guard.close('a', smtpReply(421, '4.4.2', 'Session time limit reached, closing connection'));
    guard.close('b');
    expect(a).toMatchObject({ said: ['421 4.4.2 Session time limit reached, closing connection'], closed: true });
    expect(b).toMatchObject({ said: [], closed: true });
  });
});
