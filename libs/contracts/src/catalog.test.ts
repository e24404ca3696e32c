import { describe, expect, it } from '@jest/globals';
import { catalog, isPublicEvent, isRoutingKey, parseMessage } from './catalog.ts';
import { PUBLIC_EVENT_TYPES } from './events.ts';

const envelope = (type: string, data: unknown) => ({
  id: '0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2e',
  type,
  version: 1,
  occurred_at: '2026-04-03T22:13:42.674Z',
  team_id: '0195f3a2-0000-7000-8000-000000000001',
  data,
});

const delivered = {
  email_id: '0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2f',
  created_at: '2026-04-03T22:13:40.000Z',
  from: 'Acme <o@example.com>',
  to: ['a@example.org'],
  subject: 'Hello',
};

describe('catalog', () => {
  it("holds every public event, the internal domain state, the timer commands and the services' own commands", () => {
    for (const type of PUBLIC_EVENT_TYPES) expect(isRoutingKey(type)).toBe(true);
    expect(Object.keys(catalog)).toHaveLength(35);
    expect(isRoutingKey('domain-verifier.check-domain')).toBe(true);
    expect(isRoutingKey('webhook-dispatcher.deliver')).toBe(true);
    expect(isRoutingKey('sender.deliver')).toBe(true);
    expect(isRoutingKey('sender.send-scheduled')).toBe(true);
    expect(isRoutingKey('sender.expire-suppression')).toBe(true);
    expect(isRoutingKey('sender.import-contacts')).toBe(true);
    expect(isRoutingKey('sender.send-broadcast')).toBe(true);
    expect(isRoutingKey('sender.fan-out-broadcast')).toBe(true);
    expect(isRoutingKey('internal.domain.state')).toBe(true);
    expect(isRoutingKey('internal.email.feedback')).toBe(true);
    expect(isRoutingKey('internal.contact.unsubscribe-mail')).toBe(true);
    expect(isRoutingKey('internal.webhook.disabled')).toBe(true);
    expect(isRoutingKey('internal.reputation.paused')).toBe(true);
    expect(isRoutingKey('internal.reputation.resumed')).toBe(true);
    expect(isRoutingKey('scheduler.set-timer')).toBe(true);
    expect(isRoutingKey('toString')).toBe(false);
  });

  it('counts exactly 19 public events and never an internal event or a command', () => {
    expect(Object.keys(catalog).filter(isPublicEvent)).toHaveLength(19);
    expect(isPublicEvent('internal.domain.state')).toBe(false);
    expect(isPublicEvent('scheduler.set-timer')).toBe(false);
    expect(isPublicEvent('scheduler.cancel-timer')).toBe(false);
  });
});

describe('parseMessage', () => {
  it('returns the typed message, unknown fields stripped', () => {
    const parsed = parseMessage('email.delivered', envelope('email.delivered', { ...delivered, extra: 1 }));
    expect(parsed).toEqual({ ok: true, message: envelope('email.delivered', delivered) });
  });

  it('rejects an unknown routing key', () => {
    const parsed = parseMessage('email.exploded', envelope('email.exploded', delivered));
    expect(parsed).toEqual({ ok: false, error: 'Unknown routing key "email.exploded".' });
  });

  it('rejects invalid data, naming the failing field', () => {
    const { to: _to, ...withoutTo } = delivered;
    const parsed = parseMessage('email.delivered', envelope('email.delivered', withoutTo));
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatch(/^Invalid email\.delivered data: to: /);
  });

  it('rejects an invalid envelope and a type that differs from the routing key', () => {
    expect(parseMessage('email.delivered', { ...envelope('email.delivered', delivered), version: 0 }).ok).toBe(false);
    expect(parseMessage('email.delivered', 'not an object').ok).toBe(false);
    expect(parseMessage('email.sent', envelope('email.delivered', delivered)).ok).toBe(false);
  });

  it('validates internal messages: a timer carries a whole envelope', () => {
    const timer = {
      key: 'email:1',
      due_at: '2026-04-04T00:00:00.000Z',
      routing_key: 'email.sent',
      message: envelope('x', {}),
    };
    expect(parseMessage('scheduler.set-timer', envelope('scheduler.set-timer', timer)).ok).toBe(true);
    const bad = { ...timer, key: 'k'.repeat(201) };
    expect(parseMessage('scheduler.set-timer', envelope('scheduler.set-timer', bad)).ok).toBe(false);
    expect(parseMessage('scheduler.cancel-timer', envelope('scheduler.cancel-timer', {})).ok).toBe(false);
  });

  it('accepts a team-less message and refuses a missing team_id', () => {
    const cancel = envelope('scheduler.cancel-timer', { key: 'email:1' });
    expect(parseMessage('scheduler.cancel-timer', { ...cancel, team_id: null }).ok).toBe(true);
    const { team_id: _team, ...withoutTeam } = cancel;
    expect(parseMessage('scheduler.cancel-timer', withoutTeam).ok).toBe(false);
  });
});
