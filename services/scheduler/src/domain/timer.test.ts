import { describe, expect, it } from '@jest/globals';
import type { MessageEnvelope, TimerSet } from '@postline/contracts';
import { newId } from '@postline/platform/pure';
import { checkCommandId, checkTimerSet, firedMessage } from './timer.ts';

const TEAM = '0199a1b2-0000-7000-8000-000000000001';

function delivered(overrides: Partial<MessageEnvelope> = {}): MessageEnvelope {
  return {
    id: newId(),
    type: 'email.delivered',
    version: 1,
    occurred_at: '2026-11-21T10:00:00.000Z',
    team_id: TEAM,
    data: {
      email_id: newId(),
      created_at: '2026-11-21T09:59:00.000Z',
      from: 'a@acme.test',
      to: ['b@example.test'],
      subject: 'Hi',
    },
    ...overrides,
  };
}

function setData(overrides: Partial<TimerSet> = {}): TimerSet {
  return {
    key: 'k1',
    due_at: '2026-11-21T10:05:00.000+01:00',
    routing_key: 'email.delivered',
    message: delivered(),
    ...overrides,
  };
}

describe('checkTimerSet', () => {
  it('accepts a catalog message and keeps its envelope for publishing as is', () => {
    const message = delivered();
    const commandId = newId();
    const checked = checkTimerSet(commandId, setData({ message }));
    expect(checked).toEqual({
      ok: true,
      value: {
        key: 'k1',
        dueAt: new Date('2026-11-21T09:05:00.000Z'),
        routingKey: 'email.delivered',
        message,
        commandId,
      },
    });
  });

  it('refuses an unknown routing key, a message of another type and data failing the schema', () => {
    const id = newId();
    expect(checkTimerSet(id, setData({ routing_key: 'email.nope' })).ok).toBe(false);
    expect(checkTimerSet(id, setData({ routing_key: 'email.bounced' })).ok).toBe(false);
    expect(checkTimerSet(id, setData({ message: delivered({ data: { email_id: 'not-a-uuid' } }) })).ok).toBe(false);
  });

  it('refuses a command whose id is not a UUIDv7, since ordering compares ids', () => {
    const checked = checkTimerSet('8d3e4f4a-6f1c-4b7e-9a55-3f0c2b1d7e11', setData());
    expect(checked).toEqual({ ok: false, error: expect.stringContaining('not a UUIDv7') });
    expect(checkCommandId(newId()).ok).toBe(true);
  });
});

describe('firedMessage', () => {
  it('keeps the stored id and occurred_at and picks the exchange from the routing key', () => {
    const message = delivered();
    const fired = firedMessage('email.delivered', message);
    expect(fired).toEqual({
      ok: true,
      value: {
        exchange: 'events',
        type: 'email.delivered',
        team_id: TEAM,
        data: message.data,
        id: message.id,
        occurred_at: message.occurred_at,
      },
    });
    const command = { ...delivered(), type: 'scheduler.cancel-timer', data: { key: 'other' } };
    expect(firedMessage('scheduler.cancel-timer', command)).toMatchObject({
      ok: true,
      value: { exchange: 'commands' },
    });
  });

  it('refuses a stored message that no longer matches the catalog', () => {
    expect(firedMessage('email.retired', delivered({ type: 'email.retired' })).ok).toBe(false);
  });
});
