import { describe, expect, it } from '@jest/globals';
import type { Refusal } from './refusal.ts';
import { parseScheduledAt } from './scheduled-at.ts';

// A Wednesday.
const NOW = new Date('2026-11-18T10:00:00.000Z');

/** The date `scheduled_at` parses to; fails the test if it is refused. */
function scheduled(text: string): Date {
  const result = parseScheduledAt(text, NOW);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal)}`);
  return result.date;
}

function refusalOf(result: { ok: true } | { ok: false; refusal: Refusal }): Refusal {
  if (result.ok) throw new Error('expected a refusal');
  return result.refusal;
}

describe('parseScheduledAt', () => {
  it.each([
    ['in 1 min', '2026-11-18T10:01:00.000Z'],
    ['in 2 hours', '2026-11-18T12:00:00.000Z'],
    ['tomorrow at 9am', '2026-11-19T09:00:00.000Z'],
    ['Friday at 3pm ET', '2026-11-20T20:00:00.000Z'],
    ['  In 5 Minutes ', '2026-11-18T10:05:00.000Z'],
    ['now', '2026-11-18T10:00:00.000Z'],
  ])('reads natural language %j relative to now, in UTC unless a zone is named', (text, iso) => {
    expect(scheduled(text).toISOString()).toBe(iso);
  });

  it.each([
    ['2026-11-20T09:00:00Z', '2026-11-20T09:00:00.000Z'],
    ['2026-11-20T09:00:00.250+01:00', '2026-11-20T08:00:00.250Z'],
    ['2026-11-20T09:00:00-0530', '2026-11-20T14:30:00.000Z'],
    ['2026-11-20T09:00:00', '2026-11-20T09:00:00.000Z'],
    ['2026-11-20 09:00:00.678+00', '2026-11-20T09:00:00.678Z'],
    ['2026-11-20', '2026-11-20T00:00:00.000Z'],
  ])('reads ISO 8601 %j (no offset means UTC)', (text, iso) => {
    expect(scheduled(text).toISOString()).toBe(iso);
  });

  it.each([
    'hello',
    'in 1 min please',
    '2026-02-30T09:00:00Z',
    '2026-11-20T25:00:00Z',
    '2026-11-20T09:00:00+01:99',
    '',
  ])('refuses %j', (text) => {
    expect(refusalOf(parseScheduledAt(text, NOW))).toMatchObject({ name: 'validation_error' });
  });

  it('allows 30 days ahead and refuses more', () => {
    expect(scheduled('2026-12-18T10:00:00Z').toISOString()).toBe('2026-12-18T10:00:00.000Z');
    expect(refusalOf(parseScheduledAt('2026-12-18T10:00:01Z', NOW)).message).toMatch(/30 days/);
    expect(refusalOf(parseScheduledAt('in 31 days', NOW)).message).toMatch(/30 days/);
  });

  it('tolerates a minute of clock skew into the past and refuses more', () => {
    expect(scheduled('2026-11-18T09:59:30Z').toISOString()).toBe('2026-11-18T09:59:30.000Z');
    expect(refusalOf(parseScheduledAt('2026-11-18T09:58:59Z', NOW)).message).toMatch(/past/);
    expect(refusalOf(parseScheduledAt('yesterday', NOW)).message).toMatch(/past/);
  });
});
