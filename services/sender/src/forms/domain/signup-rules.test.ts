import { describe, expect, it } from '@jest/globals';
import { judgeSubmission, MIN_FILL_MS, RENDER_TOKEN_LIFETIME_MS } from './signup-rules.ts';

const formId = '0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2e';
const now = new Date('2026-12-09T12:00:00.000Z');
const shownAgo = (ms: number) => ({ formId, renderedAt: new Date(now.getTime() - ms) });
const judge = (fields: Record<string, string>, rendered: Parameters<typeof judgeSubmission>[1]['rendered']) =>
  judgeSubmission(fields, { formId, asked: ['first_name'], now, rendered });

describe('judgeSubmission', () => {
  it('takes an address and the names the form asks, trimmed, the address in lower case', () => {
    expect(
      judge({ email: ' Ada@Example.COM ', first_name: ' Ada ', last_name: 'ignored' }, shownAgo(MIN_FILL_MS + 1)),
    ).toEqual({ kind: 'signup', signup: { email: 'ada@example.com', first_name: 'Ada', last_name: null } });
  });

  it('takes a submit without a render token (the snippet on another site)', () => {
    expect(judge({ email: 'ada@example.com' }, undefined)).toMatchObject({ kind: 'signup' });
  });

  it('traps a filled honeypot, a forged or foreign token and a submit faster than a person fills the form', () => {
    expect(judge({ email: 'ada@example.com', website: 'http://spam' }, undefined)).toEqual({
      kind: 'trapped',
      reason: 'honeypot',
    });
    expect(judge({ email: 'ada@example.com' }, 'forged')).toEqual({ kind: 'trapped', reason: 'foreign_token' });
    expect(
      judge({ email: 'ada@example.com' }, { formId: '0195f3a2-0000-7000-8000-000000000001', renderedAt: now }),
    ).toEqual({ kind: 'trapped', reason: 'foreign_token' });
    expect(judge({ email: 'ada@example.com' }, shownAgo(MIN_FILL_MS - 1))).toEqual({
      kind: 'trapped',
      reason: 'too_fast',
    });
  });

  it('shows a page open past its token lifetime again, with what was typed', () => {
    expect(judge({ email: 'ada@example.com' }, shownAgo(RENDER_TOKEN_LIFETIME_MS + 1))).toEqual({
      kind: 'stale',
      values: { email: 'ada@example.com', first_name: '' },
    });
  });

  it('names each field to correct', () => {
    expect(judge({ email: '', first_name: 'x'.repeat(101) }, undefined)).toEqual({
      kind: 'invalid',
      values: { email: '', first_name: 'x'.repeat(101) },
      errors: { email: 'Enter your email address.', first_name: 'Use at most 100 characters.' },
    });
    expect(judge({ email: 'not an address' }, undefined)).toMatchObject({
      kind: 'invalid',
      errors: { email: 'Enter an email address such as name@example.com.' },
    });
  });
});
