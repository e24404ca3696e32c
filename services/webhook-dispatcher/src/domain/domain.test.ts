import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { eventIdFor, isEventId, newAttemptId } from './ids.ts';
import { MAX_ATTEMPTS, retryDelayMs, shouldDisable } from './schedule.ts';
import { newSecret, signature, signedHeaders } from './signing.ts';

describe('retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h between the 8 attempts, then stops', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7].map((attempt) => retryDelayMs(attempt, 1, 0.5));
    expect(waits).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(retryDelayMs(MAX_ATTEMPTS, 1, 0.5)).toBeUndefined();
    expect(MAX_ATTEMPTS).toBe(8);
  });

  it('varies each wait by up to 10% either way and scales it', () => {
    expect(retryDelayMs(2, 1, 0)).toBeCloseTo(270_000);
    expect(retryDelayMs(2, 1, 0.999999)).toBeCloseTo(330_000, -1);
    expect(retryDelayMs(4, 0.001, 0.5)).toBeCloseTo(7_200);
  });

  it('disables after five (scaled) days of failures only', () => {
    const start = new Date('2026-01-01T00:00:00Z');
    expect(shouldDisable(null, new Date('2026-02-01T00:00:00Z'), 1)).toBe(false);
    expect(shouldDisable(start, new Date('2026-01-05T23:59:59Z'), 1)).toBe(false);
    expect(shouldDisable(start, new Date('2026-01-06T00:00:00Z'), 1)).toBe(true);
    expect(shouldDisable(start, new Date(start.getTime() + 432_000), 0.001)).toBe(true);
  });
});

describe('signing', () => {
  it('signs id.timestamp.body so the standardwebhooks verifier accepts it, with either secret during a rotation', () => {
    const [current, previous] = [newSecret(), newSecret()];
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = eventIdFor(randomUUID(), randomUUID(), new Date());
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"type":"email.sent","created_at":"2026-11-21T10:00:00.000Z","data":{}}';
    const headers = signedHeaders({ id, timestamp, body, secrets: [current, previous] });
    expect(headers['webhook-signature']).toBe(
      `${signature(current, id, timestamp, body)} ${signature(previous, id, timestamp, body)}`,
    );
    expect(headers['svix-signature']).toBe(headers['webhook-signature']);
    for (const secret of [current, previous]) {
      expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
    }
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(body.replace('sent', 'opened'), headers)).toThrow();
  });

  it('gives each event and endpoint one Svix-style id, the same on every copy, sorting by the event time as text', () => {
    const endpoint = randomUUID();
    const source = randomUUID();
    const at = new Date('2026-11-21T10:00:00.123Z');
    const id = eventIdFor(endpoint, source, at);
    expect(isEventId(id)).toBe(true);
    expect(eventIdFor(endpoint, source.toUpperCase(), at)).toBe(id);
    // UUIDv7 layout: the time in ms, then version 7 and the RFC 4122 variant.
    expect(id.slice(4, 16)).toBe(at.getTime().toString(16).padStart(12, '0'));
    expect(id[16]).toBe('7');
    expect('89ab').toContain(id[20]!);
    expect(eventIdFor(randomUUID(), source, at)).not.toBe(id);
    expect(eventIdFor(endpoint, randomUUID(), at)).not.toBe(id);
    const ids = Array.from({ length: 50 }, (_, i) => eventIdFor(endpoint, randomUUID(), new Date(at.getTime() + i)));
    expect(ids.every(isEventId)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(newAttemptId()).toMatch(/^atmpt_[0-9a-f]{32}$/);
  });
});
