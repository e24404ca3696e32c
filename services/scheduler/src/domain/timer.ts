import { parseMessage, type MessageEnvelope, type RoutingKey, type TimerSet } from '@postline/contracts';
import { exchangeFor, uuidv7Time, type OutboxMessage } from '@postline/platform/pure';

/** A validated `scheduler.set-timer` command, ready to store. */
export type TimerToSet = {
  key: string;
  dueAt: Date;
  routingKey: RoutingKey;
  /** Parsed against the catalog (unknown fields stripped); published as is when the timer fires. */
  message: MessageEnvelope;
  /** The command's envelope id: the version of the key's state (last writer wins). */
  commandId: string;
};

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Ordering between commands for one key is by envelope id, so it must be a UUIDv7 (time-ordered); a v4
 * id would win or lose at random. Every publisher's `enqueue` makes v7 ids.
 */
export function checkCommandId(id: string): Checked<string> {
  return uuidv7Time(id) ? { ok: true, value: id } : { ok: false, error: `command id ${id} is not a UUIDv7` };
}

/**
 * Validates a set command once, at set time: a timer that could never be published (unknown routing key,
 * envelope type differing from it, data failing the key's schema) is refused rather than stored.
 */
export function checkTimerSet(commandId: string, data: TimerSet): Checked<TimerToSet> {
  const id = checkCommandId(commandId);
  if (!id.ok) return id;
  const parsed = parseMessage(data.routing_key, data.message);
  if (!parsed.ok) return { ok: false, error: `timer ${data.key}: ${parsed.error}` };
  return {
    ok: true,
    value: {
      key: data.key,
      dueAt: new Date(data.due_at),
      routingKey: parsed.message.type,
      message: parsed.message as MessageEnvelope,
      commandId,
    },
  };
}

/**
 * The outbox row for a stored timer message, keeping the envelope's id and occurred_at so that consumers'
 * inboxes absorb any duplicate. Checked again at fire time: the catalog may have changed since the set.
 */
export function firedMessage(routingKey: string, message: MessageEnvelope): Checked<OutboxMessage> {
  const parsed = parseMessage(routingKey, message);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const envelope = parsed.message;
  return {
    ok: true,
    value: {
      exchange: exchangeFor(envelope.type),
      type: envelope.type,
      team_id: envelope.team_id,
      data: envelope.data,
      id: envelope.id,
      occurred_at: envelope.occurred_at,
    } as OutboxMessage,
  };
}
