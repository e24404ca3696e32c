import type { z } from 'zod';
import { PublicEventType, publicEvents } from './events.ts';
import {
  CheckDomain,
  DeliverEmail,
  DeliverWebhook,
  DomainState,
  EmailFeedback,
  ExpireSuppression,
  FanOutBroadcast,
  ImportContacts,
  ReputationPaused,
  ReputationResumed,
  MessageEnvelope,
  SendBroadcast,
  SendScheduledEmail,
  TimerCancel,
  TimerSet,
  UnsubscribeMail,
  WebhookDisabled,
} from './messages.ts';

/**
 * Every routing key with the schema of its `data`: the 19 public events, internal events (`internal.` prefix,
 * never delivered to customers) and commands. Publishers and consumers are typed through it.
 */
export const catalog = {
  ...publicEvents,
  'internal.domain.state': DomainState,
  'internal.email.feedback': EmailFeedback,
  'internal.contact.unsubscribe-mail': UnsubscribeMail,
  'internal.webhook.disabled': WebhookDisabled,
  'internal.reputation.paused': ReputationPaused,
  'internal.reputation.resumed': ReputationResumed,
  'scheduler.set-timer': TimerSet,
  'scheduler.cancel-timer': TimerCancel,
  'domain-verifier.check-domain': CheckDomain,
  'webhook-dispatcher.deliver': DeliverWebhook,
  'sender.deliver': DeliverEmail,
  'sender.send-scheduled': SendScheduledEmail,
  'sender.expire-suppression': ExpireSuppression,
  'sender.import-contacts': ImportContacts,
  'sender.send-broadcast': SendBroadcast,
  'sender.fan-out-broadcast': FanOutBroadcast,
} as const;

export type Catalog = typeof catalog;
export type RoutingKey = keyof Catalog;
export type MessageData<K extends RoutingKey> = z.infer<Catalog[K]>;

/** An envelope whose `type` is `K` and whose `data` matches K's schema (a union when K is a union). */
export type Message<K extends RoutingKey = RoutingKey> = {
  [T in K]: Omit<MessageEnvelope, 'type' | 'data'> & { type: T; data: MessageData<T> };
}[K];

export type ParseMessageResult<K extends RoutingKey> = { ok: true; message: Message<K> } | { ok: false; error: string };

const PUBLIC_KEYS: ReadonlySet<string> = new Set(PublicEventType.options);

export function isRoutingKey(key: string): key is RoutingKey {
  return Object.hasOwn(catalog, key);
}

/** True for the 19 event names customers can subscribe to; false for internal events and commands. */
export function isPublicEvent(key: string): key is PublicEventType {
  // A Set, not the zod enum: this runs for every message written to an outbox.
  return PUBLIC_KEYS.has(key);
}

/**
 * Validates a received envelope and its `data` against the catalog. Unknown keys, an envelope whose `type`
 * differs from `key`, and invalid data are errors (to dead-letter), returned as values. Unknown fields are stripped.
 *
 * @example
 * const parsed = parseMessage('email.delivered', JSON.parse(body));
 * if (!parsed.ok) return deadLetter(parsed.error);
 * parsed.message.data.email_id; // typed
 */
export function parseMessage<K extends RoutingKey>(key: K, envelope: unknown): ParseMessageResult<K>;
export function parseMessage(key: string, envelope: unknown): ParseMessageResult<RoutingKey>;
export function parseMessage(key: string, envelope: unknown): ParseMessageResult<RoutingKey> {
  if (!isRoutingKey(key)) return { ok: false, error: `Unknown routing key "${key}".` };
  const parsed = MessageEnvelope.safeParse(envelope);
  if (!parsed.success) return { ok: false, error: `Invalid envelope: ${describe(parsed.error)}` };
  if (parsed.data.type !== key) {
    return { ok: false, error: `Envelope type "${parsed.data.type}" does not match routing key "${key}".` };
  }
  const schema: z.ZodType = catalog[key];
  const data = schema.safeParse(parsed.data.data);
  if (!data.success) return { ok: false, error: `Invalid ${key} data: ${describe(data.error)}` };
  return { ok: true, message: { ...parsed.data, type: key, data: data.data } as Message };
}

/** One line per failure, `path: message`, joined: safe to log (no input values). */
function describe(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}
