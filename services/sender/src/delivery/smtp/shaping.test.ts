import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  createShaper,
  DEFAULT_SHAPING,
  readShapingFile,
  reloadShapingOnHangup,
  shapingConfigOf,
  signalOf,
  type Turn,
} from './shaping.ts';

const PUSHBACK = { kind: 'pushback', reason: '421 4.7.28 Our system has detected an unusual rate' } as const;

/** A shaper on a clock the test moves; gmail at 60 a minute (one a second, a burst of one). */
function shaperAt(overrides: Parameters<typeof shapingConfigOf>[0] = {}) {
  const clock = { now: 1_000_000 };
  const events: string[] = [];
  const shaper = createShaper({
    config: shapingConfigOf({
      providers: { gmail: { messagesPerMinute: 60, maxConnections: 2 } },
      pushback: { holdMs: 10_000, holdAfterPushbacks: 2, deferralsAsPushback: 3, recoverFraction: 0.25 },
      ...overrides,
    }),
    now: () => clock.now,
    onChange: (key, event) => events.push(`${key} ${event}`),
  });
  return { shaper, clock, events };
}

const go = (turn: Turn) => {
  if (turn.kind !== 'go') throw new Error(`expected a turn, got ${JSON.stringify(turn)}`);
  return turn;
};

describe('traffic shaping', () => {
  it('classifies keys by provider, and other MX hosts by their MX domain', () => {
    const { shaper } = shaperAt();
    expect(shaper.keyOf('gmail-smtp-in.l.google.com.')).toBe('gmail');
    expect(shaper.keyOf('example-com.mail.protection.outlook.com')).toBe('microsoft');
    expect(shaper.keyOf('mx1.Example.org')).toBe('other:example.org');
  });

  it('defers a delivery past the rate when the wait for a token is longer than allowed', async () => {
    const { shaper, clock } = shaperAt();
    go(await shaper.admit('gmail', 0)).done({ kind: 'success' });
    const next = await shaper.admit('gmail', 100);
    expect(next).toMatchObject({ kind: 'wait', held: false, until: new Date(clock.now + 1000) });
    clock.now += 1000;
    expect((await shaper.admit('gmail', 0)).kind).toBe('go');
  });

  it('halves the rate on pushback, holds the provider after pushbacks in a row, and releases gradually', async () => {
    const { shaper, clock, events } = shaperAt();
    go(await shaper.admit('gmail', 0)).done(PUSHBACK);
    expect(shaper.states()[0]).toMatchObject({ key: 'gmail', rate: 30, limit: 60, heldUntil: null });
    clock.now += 2000;
    go(await shaper.admit('gmail', 0)).done(PUSHBACK);
    expect(shaper.states()[0]).toMatchObject({
      rate: 15,
      heldUntil: new Date(clock.now + 10_000),
      reason: PUSHBACK.reason,
    });
    // Held: deferred at once until the release, naming why; other providers are not affected.
    expect(await shaper.admit('gmail', 60_000)).toEqual({
      kind: 'wait',
      held: true,
      until: new Date(clock.now + 10_000),
      reason: PUSHBACK.reason,
    });
    expect((await shaper.admit('microsoft', 0)).kind).toBe('go');
    clock.now += 10_000;
    // Released at the lowered rate, which each success raises by a quarter of the limit.
    go(await shaper.admit('gmail', 0)).done({ kind: 'success' });
    expect(shaper.states()[0]).toMatchObject({ rate: 30, heldUntil: null });
    clock.now += 4000;
    go(await shaper.admit('gmail', 0)).done({ kind: 'success' });
    clock.now += 2000;
    go(await shaper.admit('gmail', 0)).done({ kind: 'success' });
    expect(shaper.states()[0]).toMatchObject({ rate: 60, reason: null });
    expect(events).toEqual(['gmail pushback', 'gmail pushback', 'gmail held', 'gmail throttled']);
  });

  it('doubles a hold that follows another before the rate recovered', async () => {
    const { shaper, clock } = shaperAt({ pushback: { holdMs: 10_000, holdAfterPushbacks: 1 } });
    go(await shaper.admit('gmail', 0)).done(PUSHBACK);
    clock.now += 10_000;
    go(await shaper.admit('gmail', 0)).done(PUSHBACK);
    expect(shaper.states()[0]?.heldUntil).toEqual(new Date(clock.now + 20_000));
  });

  it('keeps a hold as it is when deliveries that began before it push back too', async () => {
    const { shaper, clock, events } = shaperAt({
      providers: { gmail: { messagesPerMinute: 6000, maxConnections: 3 } },
      pushback: { holdMs: 10_000, holdAfterPushbacks: 1 },
    });
    const inFlight = [go(await shaper.admit('gmail', 0)), go(await shaper.admit('gmail', 0))];
    inFlight[0]!.done(PUSHBACK);
    const hold = { rate: 3000, heldUntil: new Date(clock.now + 10_000), reason: PUSHBACK.reason };
    expect(shaper.states()[0]).toMatchObject(hold);
    clock.now += 1000;
    inFlight[1]!.done({ kind: 'pushback', reason: '421 4.7.0 Try again later' });
    expect(shaper.states()[0]).toMatchObject(hold);
    expect(events).toEqual(['gmail pushback', 'gmail held']);
  });

  it('does not send a delivery that waited for a session while its provider became held', async () => {
    const { shaper, clock } = shaperAt({
      providers: { gmail: { messagesPerMinute: 6000, maxConnections: 1 } },
      pushback: { holdMs: 10_000, holdAfterPushbacks: 1 },
    });
    const first = go(await shaper.admit('gmail', 0));
    const waiting = shaper.admit('gmail', 60_000);
    first.done(PUSHBACK);
    expect(await waiting).toEqual({
      kind: 'wait',
      held: true,
      until: new Date(clock.now + 10_000),
      reason: PUSHBACK.reason,
    });
    // Its session slot was given back: once the hold ends the next delivery has it at once.
    clock.now += 10_000;
    expect((await shaper.admit('gmail', 0)).kind).toBe('go');
  });

  it('tells whether a provider is held without taking a turn, counting the delivery it defers', async () => {
    const { shaper, clock, events } = shaperAt({ pushback: { holdMs: 10_000, holdAfterPushbacks: 1 } });
    expect(shaper.held('gmail')).toBeUndefined();
    go(await shaper.admit('gmail', 0)).done(PUSHBACK);
    expect(shaper.held('gmail')).toEqual({
      kind: 'wait',
      held: true,
      until: new Date(clock.now + 10_000),
      reason: PUSHBACK.reason,
    });
    expect(shaper.held('microsoft')).toBeUndefined();
    clock.now += 10_000;
    expect(shaper.held('gmail')).toBeUndefined();
    expect(events).toEqual(['gmail pushback', 'gmail held', 'gmail throttled']);
    // The hold ended: the rate (halved) gives a turn at once.
    expect((await shaper.admit('gmail', 0)).kind).toBe('go');
  });

  it('counts deferrals in a row as a pushback', async () => {
    const { shaper, clock } = shaperAt();
    for (let i = 0; i < 3; i++) {
      go(await shaper.admit('gmail', 0)).done({ kind: 'deferral', reason: '451 4.3.0 try later' });
      clock.now += 2000;
    }
    expect(shaper.states()[0]).toMatchObject({
      rate: 30,
      reason: '3 deferrals in a row, the last: 451 4.3.0 try later',
    });
  });

  it('caps the connections to a provider, giving the slot back when a delivery is done', async () => {
    const { shaper } = shaperAt({ providers: { gmail: { messagesPerMinute: 6000, maxConnections: 2 } } });
    const first = go(await shaper.admit('gmail', 0));
    go(await shaper.admit('gmail', 0));
    const third = shaper.admit('gmail', 1000);
    first.done({ kind: 'success' });
    expect((await third).kind).toBe('go');
  });

  it('tells in its states the sessions open and the deferrals in a row', async () => {
    const { shaper } = shaperAt();
    const turn = go(await shaper.admit('gmail', 0));
    expect(shaper.states()[0]).toMatchObject({
      connections: 1,
      maxConnections: 2,
      maxMessagesPerConnection: 100,
      deferrals: 0,
    });
    turn.done({ kind: 'deferral', reason: '451 4.3.0 try later' });
    expect(shaper.states()[0]).toMatchObject({ connections: 0, deferrals: 1 });
  });

  it('reads what a delivery said about its provider', () => {
    const deferred = (code: number, enhanced: string | null, response: string, mx: string | null = 'mx') => ({
      status: 'deferred',
      code,
      enhanced,
      response,
      mx,
    });
    expect(
      signalOf([
        deferred(421, '4.7.28', '421 4.7.28 unusual rate'),
        { ...deferred(250, null, ''), status: 'delivered' },
      ]),
    ).toEqual({
      kind: 'success',
    });
    expect(
      signalOf([deferred(451, '4.7.650', '451 4.7.650 The mail server has been temporarily rate limited')]).kind,
    ).toBe('pushback');
    expect(signalOf([deferred(451, '4.4.1', '451 4.4.1 No MX host: connect ECONNREFUSED', null)]).kind).toBe(
      'pushback',
    );
    expect(signalOf([deferred(451, '4.7.10', '451 4.7.10 TLS is required')]).kind).toBe('deferral');
    expect(signalOf([deferred(452, '4.2.2', '452 4.2.2 Mailbox full')]).kind).toBe('deferral');
    expect(signalOf([deferred(451, '4.3.0', '451 4.3.0 Local error', null)]).kind).toBe('none');
  });

  it('reads a file over the defaults and refuses one it does not understand', () => {
    const dir = mkdtempSync(join(tmpdir(), 'shaping-'));
    const good = join(dir, 'good.json');
    writeFileSync(
      good,
      JSON.stringify({ providers: { yahoo: { messagesPerMinute: 100 } }, pushback: { holdMs: 1000 } }),
    );
    const config = readShapingFile(good);
    expect(config.providers.yahoo).toEqual({ ...DEFAULT_SHAPING.providers.yahoo, messagesPerMinute: 100 });
    expect(config.providers.gmail).toEqual(DEFAULT_SHAPING.providers.gmail);
    expect(config.pushback.holdMs).toBe(1000);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ providers: { hotmail: { messagesPerMinute: -1 } } }));
    expect(() => readShapingFile(bad)).toThrow(/providers: Unrecognized key: "hotmail"/);
  });

  it('reads the file again on SIGHUP, keeping the limits in force when it does not parse', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'shaping-')), 'shaping.json');
    writeFileSync(path, JSON.stringify({ providers: { apple: { messagesPerMinute: 100 } } }));
    const shaper = createShaper({ config: readShapingFile(path) });
    go(await shaper.admit('apple', 0)).done({ kind: 'success' });
    const logged: string[] = [];
    const stop = reloadShapingOnHangup(path, shaper, {
      info: (_o, m) => logged.push(m),
      error: (_o, m) => logged.push(m),
    });
    try {
      writeFileSync(path, JSON.stringify({ providers: { apple: { messagesPerMinute: 50 } } }));
      process.emit('SIGHUP', 'SIGHUP');
      expect(shaper.states()[0]).toMatchObject({ key: 'apple', rate: 50, limit: 50 });
      writeFileSync(path, '{"providers": {"apple": {"messagesPerMinute": "fast"}}}');
      process.emit('SIGHUP', 'SIGHUP');
      expect(shaper.states()[0]).toMatchObject({ limit: 50 });
      expect(logged).toEqual([
        'traffic shaping limits reloaded',
        'traffic shaping file not reloaded; the limits in force are kept',
      ]);
    } finally {
      stop();
    }
  });
});
