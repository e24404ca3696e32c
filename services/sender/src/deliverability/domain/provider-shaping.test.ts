import { describe, expect, it } from '@jest/globals';
import type { ProviderState } from '../../delivery/index.ts';
import {
  providerShapingOf,
  shapingRowsOf,
  snapshotChanges,
  type ReplicaShaping,
  type ShapingRow,
} from './provider-shaping.ts';

const T = new Date('2026-12-11T10:00:00.000Z');
const at = (seconds: number) => new Date(T.getTime() + seconds * 1000);
const REPLY = '421 4.7.28 Our system has detected an unusual rate of unsolicited mail';

function state(key: string, over: Partial<ProviderState> = {}): ProviderState {
  return {
    key,
    provider: (key.startsWith('other:') ? 'other' : key) as ProviderState['provider'],
    rate: 3000,
    limit: 3000,
    connections: 0,
    maxConnections: 20,
    maxMessagesPerConnection: 100,
    deferrals: 0,
    heldUntil: null,
    reason: null,
    ...over,
  };
}

function row(key: string, over: Partial<ShapingRow> = {}): ShapingRow {
  return {
    key,
    provider: state(key).provider,
    state: 'normal',
    ratePerMinute: 3000,
    limitPerMinute: 3000,
    connections: 0,
    maxConnections: 20,
    maxMessagesPerConnection: 100,
    deferrals: 0,
    reason: null,
    heldUntil: null,
    ...over,
  };
}

function replica(name: string, key: string, over: Partial<ReplicaShaping> = {}): ReplicaShaping {
  return { ...row(key), replica: name, sendingIp: null, updatedAt: T, ...over };
}

describe("a process's shaping rows", () => {
  it('says held while a hold lasts, slowed while the rate is under its limit, normal otherwise', () => {
    const rows = shapingRowsOf([
      state('gmail', { rate: 750, heldUntil: at(300), reason: REPLY }),
      state('microsoft', { rate: 600.123456, limit: 1200, reason: REPLY, deferrals: 2, connections: 3 }),
      state('yahoo', { limit: 1200, rate: 1200, reason: 'kept past a lowered limit' }),
    ]);
    expect(rows).toEqual([
      expect.objectContaining({ key: 'gmail', state: 'held', heldUntil: at(300), reason: REPLY, ratePerMinute: 750 }),
      expect.objectContaining({
        key: 'microsoft',
        state: 'slowed',
        ratePerMinute: 600.12,
        limitPerMinute: 1200,
        connections: 3,
        deferrals: 2,
        reason: REPLY,
      }),
      expect.objectContaining({ key: 'yahoo', state: 'normal', reason: null }),
    ]);
  });

  it('leaves out other MX domains at their limits, and keeps at most a few of the others, the worst first', () => {
    const rows = shapingRowsOf(
      [
        state('other:fine.example', { connections: 5 }),
        state('other:slow.example', { rate: 500_000, limit: 600_000, reason: REPLY }),
        state('other:slower.example', { rate: 30_000, limit: 600_000, reason: REPLY }),
        state('other:held-soon.example', { rate: 30_000, limit: 600_000, heldUntil: at(60), reason: REPLY }),
        state('other:held-long.example', { rate: 30_000, limit: 600_000, heldUntil: at(600), reason: REPLY }),
        state('apple', { limit: 1200, rate: 1200 }),
      ],
      3,
    );
    expect(rows.map((r) => r.key)).toEqual([
      'apple',
      'other:held-long.example',
      'other:held-soon.example',
      'other:slower.example',
    ]);
  });
});

describe('what a process writes of its rows', () => {
  it('writes new and changed rows, refreshes unchanged ones when due, and removes the keys gone', () => {
    const written = new Map([
      ['gmail', { row: row('gmail'), at: 1000 }],
      ['microsoft', { row: row('microsoft'), at: 9000 }],
      ['yahoo', { row: row('yahoo'), at: 9000 }],
      ['apple', { row: row('apple'), at: 9000 }],
    ]);
    const held = row('microsoft', { state: 'held', heldUntil: at(60), reason: REPLY });
    const changes = snapshotChanges(
      written,
      [row('gmail'), held, row('yahoo'), row('other:a.example')],
      11_000,
      10_000,
    );
    expect(changes.upsert.map((r) => r.key)).toEqual(['gmail', 'microsoft', 'other:a.example']);
    expect(changes.remove).toEqual(['apple']);
    expect(snapshotChanges(written, [row('yahoo', { heldUntil: at(1) })], 9000, 10_000).upsert).toHaveLength(1);
    expect(snapshotChanges(written, [row('yahoo')], 9000, 10_000).upsert).toHaveLength(0);
  });
});

describe('the install-wide view', () => {
  it('shows each provider as the worst of its processes, with the last release, and their figures summed', () => {
    const view = providerShapingOf([
      replica('sender-a (pid 1)', 'gmail', {
        state: 'slowed',
        ratePerMinute: 1500,
        reason: '451 4.7.650 rate limited',
        connections: 4,
        deferrals: 3,
        sendingIp: '10.0.0.1',
      }),
      replica('sender-b (pid 1)', 'gmail', {
        state: 'held',
        ratePerMinute: 750,
        reason: REPLY,
        heldUntil: at(300),
        sendingIp: '10.0.0.2',
        updatedAt: at(2),
      }),
      replica('sender-c (pid 1)', 'gmail', {
        state: 'held',
        ratePerMinute: 750,
        reason: 'an earlier reply',
        heldUntil: at(100),
      }),
    ]);
    expect(view).toHaveLength(1);
    expect(view[0]).toMatchObject({
      key: 'gmail',
      provider: 'gmail',
      mxDomain: null,
      state: 'held',
      reason: REPLY,
      heldUntil: at(300),
      ratePerMinute: 3000,
      limitPerMinute: 9000,
      connections: 4,
      maxConnections: 60,
      deferrals: 3,
      limits: { messagesPerMinute: 3000, maxConnections: 20, maxMessagesPerConnection: 100 },
      updatedAt: at(2),
    });
    expect(view[0]?.replicas.map((r) => r.replica)).toEqual([
      'sender-b (pid 1)',
      'sender-c (pid 1)',
      'sender-a (pid 1)',
    ]);
  });

  it('lists the held first, then the slowed, then the rest, named providers before other MX domains', () => {
    const view = providerShapingOf([
      replica('a', 'apple'),
      replica('a', 'gmail'),
      replica('a', 'other:b.example', { state: 'slowed', ratePerMinute: 10, reason: REPLY }),
      replica('a', 'yahoo', { state: 'slowed', ratePerMinute: 600, reason: REPLY }),
      replica('a', 'microsoft', { state: 'held', heldUntil: at(60), reason: REPLY }),
    ]);
    expect(view.map((p) => p.key)).toEqual(['microsoft', 'yahoo', 'other:b.example', 'gmail', 'apple']);
    expect(view.find((p) => p.provider === 'other')?.mxDomain).toBe('b.example');
    expect(providerShapingOf([])).toEqual([]);
  });
});
