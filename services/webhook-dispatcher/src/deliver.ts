// One delivery attempt per `webhook-dispatcher.deliver` command: the HTTP POST runs before the
// transaction (no transaction is held across a 15 s wait); its outcome, the event's next state, the
// endpoint's failure streak and the next retry timer commit together.
import type { Kysely, Transaction } from 'kysely';
import type { DeliverWebhook } from '@postline/contracts';
import {
  createConsumer,
  enqueueCommand,
  newId,
  type Broker,
  type Consumer,
  type Counter,
  type Histogram,
  type Logger,
  type SecretBox,
} from '@postline/platform';
import { lockEndpoint, updateEndpoint } from './db/endpoints.ts';
import { findEventById, insertAttempt, lockEvent, updateEvent } from './db/events.ts';
import type { DispatcherDb, EndpointRow, EventRow } from './db/schema.ts';
import { newAttemptId } from './domain/ids.ts';
import { MAX_ATTEMPTS, retryDelayMs, shouldDisable } from './domain/schedule.ts';
import { signedHeaders } from './domain/signing.ts';

/** What the delivery client returns for one POST (never throws for network outcomes). */
export type PostResult = { ok: boolean; status: number | null; body: string; error?: string; durationMs: number };
export type WebhookPoster = { post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult> };

export type DeliverDeps = {
  db: Kysely<DispatcherDb>;
  broker: Broker;
  logger: Logger;
  box: SecretBox;
  client: WebhookPoster;
  /** POSTLINE_DELAY_SCALE. */
  scale: number;
  /** Deliveries in flight at once per endpoint; more wait on a short timer instead of a consumer slot. */
  perEndpoint: number;
  /** Deliveries in flight at once overall (consumer prefetch). */
  overall: number;
  metrics: {
    deliveries: Counter<'outcome'>;
    attemptDuration: Histogram<'outcome'>;
  };
  random?: () => number;
  now?: () => Date;
};

type Prepared =
  | { kind: 'skip'; why: 'gone' | 'done' | 'disabled' }
  | { kind: 'busy' }
  | { kind: 'attempted'; result: PostResult; sentAt: Date };

export const USER_AGENT = 'Postline-Webhooks/1.0';
/** How long a delivery waits when its endpoint already has `perEndpoint` deliveries in flight. */
const BUSY_WAIT_MS = 500;

export function createDeliverConsumer(deps: DeliverDeps): Consumer {
  const inFlight = new Map<string, number>();
  const now = () => deps.now?.() ?? new Date();

  async function prepare(command: DeliverWebhook): Promise<Prepared> {
    const event = await findEventById(deps.db, command.event_id);
    if (!event) return { kind: 'skip', why: 'gone' };
    if (!command.replay && (event.attempts_made >= (command.attempt ?? 0) || event.status === 'success' || event.status === 'failed')) {
      return { kind: 'skip', why: 'done' };
    }
    const endpoint = await deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', event.endpoint_id).executeTakeFirst();
    if (!endpoint) return { kind: 'skip', why: 'gone' };
    if (endpoint.status === 'disabled') return { kind: 'skip', why: 'disabled' };
    const running = inFlight.get(endpoint.id) ?? 0;
    if (running >= deps.perEndpoint) return { kind: 'busy' };
    inFlight.set(endpoint.id, running + 1);
    try {
      const sentAt = now();
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signedHeaders({ id: event.id, timestamp: Math.floor(sentAt.getTime() / 1000), body: event.body, secrets: secretsOf(endpoint, sentAt) }),
      };
      const result = await deps.client.post(endpoint.endpoint, event.body, headers);
      return { kind: 'attempted', result, sentAt };
    } finally {
      const left = (inFlight.get(endpoint.id) ?? 1) - 1;
      if (left > 0) inFlight.set(endpoint.id, left);
      else inFlight.delete(endpoint.id);
    }
  }

  /** The current secret first; during the 24 h after a rotation, the previous one second. */
  function secretsOf(endpoint: EndpointRow, at: Date): string[] {
    const secrets = [deps.box.open(endpoint.secret_encrypted)];
    if (endpoint.previous_secret_encrypted && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > at) {
      secrets.push(deps.box.open(endpoint.previous_secret_encrypted));
    }
    return secrets;
  }

  async function record(trx: Transaction<DispatcherDb>, command: DeliverWebhook, teamId: string, prepared: Prepared): Promise<void> {
    if (prepared.kind === 'busy') {
      await scheduleDelivery(trx, teamId, command, new Date(now().getTime() + BUSY_WAIT_MS * (1 + (deps.random ?? Math.random)())));
      return;
    }
    const event = await lockEvent(trx, command.event_id);
    if (!event) return;
    if (prepared.kind === 'skip') {
      // Retries of an endpoint that got disabled stop here; the event stays replayable.
      if (prepared.why === 'disabled' && !command.replay && (event.status === 'pending' || event.status === 'attempting')) {
        await updateEvent(trx, event.id, { status: 'failed', next_attempt_at: null });
      }
      return;
    }
    const { result, sentAt } = prepared;
    // A duplicate command whose twin already recorded this attempt: its POST was one more at-least-once delivery.
    if (!command.replay && event.attempts_made >= (command.attempt ?? 0)) return;
    await insertAttempt(trx, {
      id: newAttemptId(),
      event_id: event.id,
      endpoint_id: event.endpoint_id,
      attempt: command.replay ? null : command.attempt,
      replay: command.replay,
      sent_at: sentAt,
      http_status_code: result.status,
      response: result.body,
      error: result.error ?? null,
      duration_ms: Math.round(result.durationMs),
    });
    const outcome = result.ok ? 'success' : 'failure';
    deps.metrics.deliveries.inc({ outcome: command.replay ? `replay_${outcome}` : outcome });
    deps.metrics.attemptDuration.observe({ outcome }, result.durationMs / 1000);
    if (command.replay) await afterReplay(trx, event, result.ok);
    else await afterAttempt(trx, event, command.attempt ?? 1, result.ok, sentAt);
    await trackEndpoint(trx, event.endpoint_id, result.ok, sentAt);
  }

  async function afterAttempt(trx: Transaction<DispatcherDb>, event: EventRow, attempt: number, ok: boolean, sentAt: Date): Promise<void> {
    if (ok) {
      await updateEvent(trx, event.id, { status: 'success', attempts_made: attempt, next_attempt_at: null });
      return;
    }
    const delay = retryDelayMs(attempt, deps.scale, (deps.random ?? Math.random)());
    if (delay === undefined || attempt >= MAX_ATTEMPTS) {
      await updateEvent(trx, event.id, { status: 'failed', attempts_made: attempt, next_attempt_at: null });
      return;
    }
    const next = new Date(sentAt.getTime() + delay);
    await updateEvent(trx, event.id, { status: 'attempting', attempts_made: attempt, next_attempt_at: next });
    await scheduleDelivery(trx, event.team_id, { event_id: event.id, attempt: attempt + 1, replay: false }, next);
  }

  /** A replay never moves the schedule; a successful one settles an event that was still failing. */
  async function afterReplay(trx: Transaction<DispatcherDb>, event: EventRow, ok: boolean): Promise<void> {
    if (!ok || event.status === 'success') return;
    await updateEvent(trx, event.id, { status: 'success', next_attempt_at: null });
    if (event.status === 'attempting' || event.status === 'pending') {
      await enqueueCommand(trx, 'scheduler.cancel-timer', event.team_id, { key: attemptTimerKey(event.id) });
    }
  }

  /** Any success resets the endpoint's failure streak; five days (scaled) of nothing but failures disables it. */
  async function trackEndpoint(trx: Transaction<DispatcherDb>, endpointId: string, ok: boolean, at: Date): Promise<void> {
    const endpoint = await lockEndpoint(trx, endpointId);
    if (!endpoint) return;
    if (ok) {
      if (endpoint.failing_since) await updateEndpoint(trx, endpoint.id, { failing_since: null });
      return;
    }
    const since = endpoint.failing_since ?? at;
    if (endpoint.status === 'enabled' && shouldDisable(since, at, deps.scale)) {
      await updateEndpoint(trx, endpoint.id, { failing_since: since, status: 'disabled', disabled_reason: 'every delivery failed for 5 days' });
      deps.logger.warn({ endpoint_id: endpoint.id, failing_since: since.toISOString() }, 'webhook endpoint disabled');
    } else if (!endpoint.failing_since) {
      await updateEndpoint(trx, endpoint.id, { failing_since: since });
    }
  }

  return createConsumer<DispatcherDb, 'webhook-dispatcher.deliver', Prepared>({
    broker: deps.broker,
    db: deps.db,
    service: 'webhook-dispatcher',
    name: 'deliver',
    bindings: [{ exchange: 'commands', routingKey: 'webhook-dispatcher.deliver' }],
    prefetch: deps.overall,
    logger: deps.logger,
    prepare: (message) => prepare(message.data),
    handle: async (message, trx, prepared) => {
      if (!message.team_id) return;
      await record(trx, message.data, message.team_id, prepared);
    },
  });
}

export function attemptTimerKey(eventId: string): string {
  return `webhook-attempt:${eventId}`;
}

/** A delivery command at `due`, through a scheduler timer (retries and busy waits). */
export async function scheduleDelivery(
  trx: Transaction<DispatcherDb>,
  teamId: string,
  command: DeliverWebhook,
  due: Date,
): Promise<void> {
  // Retries of an event share one timer key (a newer schedule replaces it); a deferred replay gets its own.
  const key = command.replay ? `webhook-replay:${command.event_id}:${newId()}` : attemptTimerKey(command.event_id);
  await enqueueCommand(trx, 'scheduler.set-timer', teamId, {
    key,
    due_at: due.toISOString(),
    routing_key: 'webhook-dispatcher.deliver',
    message: {
      id: newId(),
      type: 'webhook-dispatcher.deliver',
      version: 1,
      occurred_at: new Date().toISOString(),
      team_id: teamId,
      data: command,
    },
  });
}
