import { describe, expect, it } from '@jest/globals';
import type { ProviderState } from '../../delivery/index.ts';
import {
  shapingRowsOf,
  shapingViewOf,
  snapshotChanges,
  writesAtOnce,
  type ReplicaShaping,
  type ShapingRow,
} from './provider-shaping.ts';

const T = new Date('2026-12-11T10:00:00.000Z');
const at = (seconds: number) => new Date(T.getTime() + seconds * 1000);
const REPLY = '421 4.7.28 Our system has detected an unusual rate of unsolicited mail';
const GREYLISTED = '450 4.7.1 <bob@acme-legal.com>: Recipient address rejected: Greylisted';

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
    servers: null,
    ...over,
  };
}

function replica(name: string, key: string, over: Partial<ReplicaShaping> = {}): ReplicaShaping {
  return { ...row(key), processId: `${name}-id`, replica: name, sendingIp: null, updatedAt: T, ...over };
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

  it("keeps no address of a named provider's reply", () => {
    const [apple] = shapingRowsOf([
      state('apple', { rate: 600, limit: 1200, reason: `10 deferrals in a row, the last: ${GREYLISTED}` }),
    ]);
    expect(apple?.reason).toBe(
      '10 deferrals in a row, the last: 450 4.7.1 <…>: Recipient address rejected: Greylisted',
    );
  });

  it('counts the other MX domains slowed or held in one row that names none of them', () => {
    const rows = shapingRowsOf([
      state('other:fine.example', { connections: 5 }),
      state('other:slow.example', { rate: 500_000, limit: 600_000, reason: GREYLISTED }),
      state('other:slower.example', { rate: 30_000, limit: 600_000, reason: REPLY }),
      state('other:held-soon.example', { rate: 30_000, limit: 600_000, heldUntil: at(60), reason: REPLY }),
      state('other:held-long.example', { rate: 30_000, limit: 600_000, heldUntil: at(600), reason: GREYLISTED }),
      state('apple', { limit: 1200, rate: 1200 }),
    ]);
    expect(rows.map((r) => r.key)).toEqual(['apple', 'other']);
    expect(rows[1]).toEqual(
      row('other', {
        state: 'held',
        ratePerMinute: 0,
        limitPerMinute: 0,
        maxConnections: 0,
        maxMessagesPerConnection: 0,
        reason: '450 4.7.1',
        heldUntil: at(600),
        servers: { slowed: 2, held: 2, firstHeldUntil: at(60) },
      }),
    );
    expect(JSON.stringify(rows)).not.toMatch(/example|acme|bob/);
    // None slowed or held: no row.
    expect(shapingRowsOf([state('other:fine.example')])).toEqual([]);
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
    const changes = snapshotChanges(written, [row('gmail'), held, row('yahoo'), row('other')], 11_000, 10_000);
    expect(changes.upsert.map((r) => r.key)).toEqual(['gmail', 'microsoft', 'other']);
    expect(changes.remove).toEqual(['apple']);
    expect(snapshotChanges(written, [row('yahoo', { heldUntil: at(1) })], 9000, 10_000).upsert).toHaveLength(1);
    expect(snapshotChanges(written, [row('yahoo')], 9000, 10_000).upsert).toHaveLength(0);
  });

  it('writes the other MX domains again when a count changes, not when one of their rates does', () => {
    const others = (slowedRate: number, count: number) =>
      shapingRowsOf(
        Array.from({ length: count }, (_, i) =>
          state(`other:d${i}.example`, { rate: slowedRate, limit: 600_000, reason: REPLY }),
        ),
      );
    const written = new Map([['other', { row: others(300_000, 2)[0]!, at: 1000 }]]);
    expect(snapshotChanges(written, others(312_000, 2), 2000, 10_000).upsert).toEqual([]);
    expect(snapshotChanges(written, others(300_000, 3), 2000, 10_000).upsert).toHaveLength(1);
  });

  it('writes at once a named provider pushing back or held, never another MX domain', () => {
    expect(writesAtOnce('gmail', 'held')).toBe(true);
    expect(writesAtOnce('microsoft', 'pushback')).toBe(true);
    expect(writesAtOnce('gmail', 'deferral')).toBe(false);
    expect(writesAtOnce('gmail', 'throttled')).toBe(false);
    expect(writesAtOnce('other:acme-legal.com', 'pushback')).toBe(false);
    expect(writesAtOnce('other:acme-legal.com', 'held')).toBe(false);
  });
});

describe('the install-wide view', () => {
  it('shows each provider as the worst of its processes, with the last release, and their figures summed', () => {
    const { providers } = shapingViewOf([
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
    expect(providers).toHaveLength(1);
    expect(providers[0]).toMatchObject({
      provider: 'gmail',
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
    expect(providers[0]?.replicas.map((r) => r.replica)).toEqual([
      'sender-b (pid 1)',
      'sender-c (pid 1)',
      'sender-a (pid 1)',
    ]);
  });

  it('tells apart two processes of one name by their ids', () => {
    const { providers } = shapingViewOf([
      replica('sender (pid 1)', 'gmail', { processId: 'b-restarted' }),
      replica('sender (pid 1)', 'gmail', { processId: 'a-before' }),
    ]);
    expect(providers[0]?.replicas.map((r) => r.processId)).toEqual(['a-before', 'b-restarted']);
  });

  it('lists the named providers, the held first, then the slowed, then the rest', () => {
    const { providers } = shapingViewOf([
      replica('a', 'apple'),
      replica('a', 'gmail'),
      replica('a', 'yahoo', { state: 'slowed', ratePerMinute: 600, reason: REPLY }),
      replica('a', 'microsoft', { state: 'held', heldUntil: at(60), reason: REPLY }),
    ]);
    expect(providers.map((p) => p.provider)).toEqual(['microsoft', 'yahoo', 'gmail', 'apple']);
    expect(shapingViewOf([])).toEqual({
      providers: [],
      otherServers: { slowed: 0, held: 0, firstHeldUntil: null, lastHeldUntil: null, reason: null },
    });
  });

  it("cleans the replies a process of an older version wrote whole, and counts its other MX domains' rows", () => {
    const view = shapingViewOf([
      replica('old', 'yahoo', { state: 'slowed', ratePerMinute: 600, reason: GREYLISTED }),
      replica('old', 'other:acme-legal.com', { state: 'slowed', ratePerMinute: 10, reason: GREYLISTED }),
      replica('old', 'other:b.example', { state: 'held', heldUntil: at(30), reason: REPLY }),
      replica('new', 'other', {
        state: 'held',
        reason: '452 4.2.2',
        heldUntil: at(900),
        servers: { slowed: 3, held: 2, firstHeldUntil: at(20) },
      }),
    ]);
    expect(view.providers.map((p) => [p.provider, p.reason])).toEqual([
      ['yahoo', '450 4.7.1 <…>: Recipient address rejected: Greylisted'],
    ]);
    expect(view.otherServers).toEqual({
      slowed: 4,
      held: 3,
      firstHeldUntil: at(20),
      lastHeldUntil: at(900),
      reason: '452 4.2.2',
    });
    expect(JSON.stringify(view)).not.toMatch(/acme|b\.example|bob/);
    expect(
      shapingViewOf([replica('old', 'other:acme-legal.com', { state: 'slowed', reason: GREYLISTED })]),
    ).toMatchObject({ otherServers: { slowed: 1, held: 0, reason: '450 4.7.1' } });
  });
});
