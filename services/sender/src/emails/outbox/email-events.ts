// The `data` of the email events (as Resend's webhooks carry it) built from a stored email, and the outbox rows that
// carry them.
import type { EmailSent, PublicEventData } from '@postline/contracts';
import type { OutboxMessage } from '@postline/platform';
import type { EmailRow, Header, Tag } from '../../db/schema.ts';

/** The fields every email event carries; `to` names the recipients the event is about. */
export function emailEventData(email: EmailRow, to: readonly string[] = email.to_addresses): EmailSent {
  const tags = email.tags as unknown as Tag[];
  const headers = email.headers as unknown as Header[];
  return {
    email_id: email.id,
    created_at: email.created_at.toISOString(),
    from: email.from_header,
    to: [...to],
    subject: email.subject,
    message_id: email.message_id,
    ...(email.broadcast_id ? { broadcast_id: email.broadcast_id } : {}),
    ...(email.template_id ? { template_id: email.template_id } : {}),
    ...(tags.length > 0 ? { tags: Object.fromEntries(tags.map((t) => [t.name, t.value])) } : {}),
    // Only headers the sender set: a broadcast's are the unsubscribe headers Postline adds, whose link holds
    // the recipient's token.
    ...(headers.length > 0 && email.broadcast_id === null
      ? { headers: headers.map((h) => ({ name: h.name, value: h.value })) }
      : {}),
  };
}

type EmailEventKey =
  | 'email.scheduled'
  | 'email.sent'
  | 'email.delivered'
  | 'email.delivery_delayed'
  | 'email.bounced'
  | 'email.complained'
  | 'email.suppressed'
  | 'email.failed';

/** What an event carries beyond the common email fields (`bounce`, `failed`, ...), as its contract says. */
type Extra<K extends EmailEventKey> = Omit<PublicEventData<K>, keyof EmailSent>;

/** One email event as an outbox row. */
export function emailEvent<K extends EmailEventKey>(
  type: K,
  email: EmailRow,
  to: readonly string[],
  extra: Extra<K>,
): OutboxMessage {
  return outboxEvent(type, email, to, extra);
}

/**
 * Events described apart from their email (as delivery/domain/attempt-record.ts describes an attempt's), as outbox
 * rows in their order. The description's type keeps each `extra` to its event's contract.
 */
export function emailEventsOf(
  email: EmailRow,
  events: readonly { type: EmailEventKey; to: readonly string[]; extra: object }[],
): OutboxMessage[] {
  return events.map((event) => outboxEvent(event.type, email, event.to, event.extra));
}

function outboxEvent(type: EmailEventKey, email: EmailRow, to: readonly string[], extra: object): OutboxMessage {
  return {
    exchange: 'events',
    type,
    team_id: email.team_id,
    data: { ...emailEventData(email, to), ...extra },
  } as OutboxMessage;
}
