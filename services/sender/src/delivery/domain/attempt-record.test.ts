import { describe, expect, it } from '@jest/globals';
import { attemptEffects, diagnostic, planRecipientStates, type AttemptRecipient } from './attempt-record.ts';
import type { RecipientResult } from './recipient-result.ts';

const DAY = 86_400_000;
const now = new Date('2026-11-20T12:00:00.000Z');
const recipient = (position: number, address: string, firstDeferredAt: Date | null = null): AttemptRecipient => ({
  position,
  address,
  domain: address.slice(address.indexOf('@') + 1),
  first_deferred_at: firstDeferredAt,
});

describe('planRecipientStates', () => {
  it('keeps a deferral within the lifetime deferred, from its first deferral on', () => {
    const since = new Date(now.getTime() - DAY);
    const [fresh, again] = planRecipientStates(
      [recipient(0, 'a@far.test'), recipient(1, 'b@far.test', since)],
      [
        { kind: 'deferred', code: 451, response: '451 4.7.1 greylisted', fromServer: true },
        { kind: 'deferred', code: 451, response: '451 4.7.1 greylisted', fromServer: true },
      ],
      now,
      5 * DAY,
    );
    expect(fresh).toMatchObject({ status: 'deferred', firstDeferredAt: now, bounceType: null });
    expect(again).toMatchObject({ status: 'deferred', firstDeferredAt: since });
  });

  it('ends a deferral past the lifetime: a transient bounce when a server answered, failed when none did', () => {
    const since = new Date(now.getTime() - 6 * DAY);
    const [answered, silent] = planRecipientStates(
      [recipient(0, 'a@far.test', since), recipient(1, 'b@far.test', since)],
      [
        { kind: 'deferred', code: 452, response: '452 4.2.2 mailbox full', fromServer: true },
        {
          kind: 'deferred',
          code: 451,
          response: '451 4.4.1 No MX host of the recipient domain could be reached',
          fromServer: false,
        },
      ],
      now,
      5 * DAY,
    );
    expect(answered).toMatchObject({ status: 'bounced', bounceType: 'Transient', bounceSubType: 'MailboxFull' });
    expect(silent).toMatchObject({ status: 'failed', bounceType: null });
  });
});

describe('attemptEffects', () => {
  const effectsOf = (
    recipients: AttemptRecipient[],
    results: RecipientResult[],
    recorded = (_recipient: AttemptRecipient) => true,
  ) => attemptEffects(planRecipientStates(recipients, results, now, 5 * DAY), recorded);

  it('describes the events in order, the last event, the positions to retry and the bounces', () => {
    const effects = effectsOf(
      [
        recipient(0, 'ok@far.test'),
        recipient(1, 'later@far.test'),
        recipient(2, 'gone@far.test'),
        recipient(3, 'listed@far.test'),
      ],
      [
        { kind: 'delivered', code: 250, response: '250 2.0.0 OK' },
        { kind: 'deferred', code: 451, response: '451 4.7.1 greylisted', fromServer: true },
        {
          kind: 'bounced',
          code: 550,
          response: '550 5.1.1 no such user',
          bounce: { type: 'Permanent', subType: 'General', suppress: true },
        },
        { kind: 'suppressed', reason: 'previous_bounce' },
      ],
    );
    expect(effects.events.map((e) => [e.type, e.to])).toEqual([
      ['email.delivered', ['ok@far.test']],
      ['email.delivery_delayed', ['later@far.test']],
      ['email.bounced', ['gone@far.test']],
      ['email.suppressed', ['listed@far.test']],
    ]);
    expect(effects.lastEvent).toBe('suppressed');
    expect(effects.retry).toEqual([1]);
    expect(effects.bounced).toEqual([
      {
        address: 'gone@far.test',
        bounce: {
          type: 'Permanent',
          subType: 'General',
          message: expect.any(String),
          diagnosticCode: ['smtp; 550 5.1.1 no such user'],
        },
        suppress: true,
        transient: false,
      },
    ]);
  });

  it('says nothing of a recipient whose state was not recorded, and never suppresses a sandbox address', () => {
    const effects = effectsOf(
      [recipient(0, 'taken@far.test'), recipient(1, 'bounced@postline.test')],
      [
        { kind: 'delivered', code: 250, response: '250 OK' },
        {
          kind: 'bounced',
          code: 550,
          response: '5.1.1 sandbox',
          bounce: { type: 'Permanent', subType: 'General', suppress: true },
        },
      ],
      (r: AttemptRecipient) => r.position !== 0,
    );
    expect(effects.events.map((e) => e.type)).toEqual(['email.bounced']);
    expect(effects.bounced[0]).toMatchObject({
      suppress: false,
      bounce: { diagnosticCode: ['smtp; 550 5.1.1 sandbox'] },
    });
  });

  it('counts a transient bounce of the mailbox towards a temporary suppression, not a refusal of the content', () => {
    const effects = effectsOf(
      [recipient(0, 'full@far.test'), recipient(1, 'spam@far.test')],
      [
        {
          kind: 'bounced',
          code: 552,
          response: '552 5.2.2 full',
          bounce: { type: 'Transient', subType: 'MailboxFull', suppress: false },
        },
        {
          kind: 'bounced',
          code: 550,
          response: '550 5.7.1 spam',
          bounce: { type: 'Transient', subType: 'ContentRejected', suppress: false },
        },
      ],
    );
    expect(effects.bounced.map((b) => [b.address, b.transient])).toEqual([
      ['full@far.test', true],
      ['spam@far.test', false],
    ]);
  });
});

describe('diagnostic', () => {
  it('writes a DSN diagnostic code, adding the reply code when the text lacks it', () => {
    expect(diagnostic(550, '550 5.1.1 no such user')).toBe('smtp; 550 5.1.1 no such user');
    expect(diagnostic(550, '5.1.1 sandbox')).toBe('smtp; 550 5.1.1 sandbox');
  });
});
