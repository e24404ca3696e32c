// One delivery attempt per `webhook-dispatcher.deliver` command: the HTTP POST runs before the
// transaction (no transaction is held across a 15 s wait); its outcome, the event's next state, the
// endpoint's failure streak and the next retry timer commit together.
import type { Kysely, Transaction } from 'kysely';
import type { DeliverWebhook } from '@postline/contracts';
import { sql } from 'kysely';
import {
  createConsumer,
  enqueue,
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
import { insertAttempt, lockEvent, updateEvent } from './db/events.ts';
import type { DispatcherDb, EndpointRow, EventRow } from './db/schema.ts';
import type { PostResult, WebhookClient } from './delivery/http-client.ts';
import { newAttemptId } from './domain/ids.ts';
import { MAX_ATTEMPTS, retryDelayMs, shouldDisable } from './domain/schedule.ts';
import { signedHeaders } from './domain/signing.ts';


export type DeliverDeps = {
  db: Kysely<DispatcherDb>;
  broker: Broker;
  logger: Logger;
  box: SecretBox;
  client: Pick<WebhookClient, 'post'>;
  /** POSTLINE_DELAY_SCALE. */
  scale: number;
  /**
   * Deliveries in flight at once per endpoint. As many more may wait in process for a slot; beyond that a
   * delivery waits on a short timer instead, so one slow endpoint holds at most 2 × perEndpoint of the
   * `overall` consumer slots.
   */
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
  | { kind: 'attempted'; result: PostResult; sentAt: Date; endpointFailing: boolean };

/** One event with what delivering it needs from its endpoint, read in one query. */
type Target = Pick<EventRow, 'id' | 'team_id' | 'endpoint_id' | 'body' | 'status' | 'attempts_made'> &
  Pick<EndpointRow, 'endpoint' | 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at' | 'failing_since'> & {
    endpoint_status: EndpointRow['status'];
  };

function findTarget(db: Kysely<DispatcherDb>, eventId: string): Promise<Target | undefined> {
  return db
    .selectFrom('webhook_events as e')
    .innerJoin('webhook_endpoints as p', 'p.id', 'e.endpoint_id')
    .select([
      'e.id',
      'e.team_id',
      'e.endpoint_id',
      'e.body',
      'e.status',
      'e.attempts_made',
      'p.endpoint',
      'p.status as endpoint_status',
      'p.secret_encrypted',
      'p.previous_secret_encrypted',
      'p.previous_secret_expires_at',
      'p.failing_since',
    ])
    .where('e.id', '=', eventId)
    .executeTakeFirst();
}

const USER_AGENT = 'Postline-Webhooks/1.0';
/** How long a delivery waits when its endpoint already has `perEndpoint` deliveries in flight. */
const BUSY_WAIT_MS = 500;

export type Deliveries = {
  /** Consumes `webhook-dispatcher.deliver` commands (retries, replays, busy waits, swept first attempts). */
  consumer: Consumer;
  /**
   * Makes a first attempt in process, right after the fan-out committed, without a broker hop. Never
   * throws; if this process dies first, the first-attempt sweeper sends the command instead.
   */
  deliverNow: (eventId: string, teamId: string) => void;
};

export function createDeliveries(deps: DeliverDeps): Deliveries {
  const slots = new Map<string, { running: number; waiting: (() => void)[] }>();

  /** A delivery slot of this endpoint: at once, after waiting behind at most perEndpoint others, or none. */
  async function acquire(endpointId: string): Promise<boolean> {
    const slot = slots.get(endpointId) ?? { running: 0, waiting: [] };
    slots.set(endpointId, slot);
    if (slot.running < deps.perEndpoint) {
      slot.running++;
      return true;
    }
    if (slot.waiting.length >= deps.perEndpoint) return false;
    // The releasing delivery hands its slot over: `running` stays the same.
    await new Promise<void>((resolve) => slot.waiting.push(resolve));
    return true;
  }

  function release(endpointId: string): void {
    const slot = slots.get(endpointId);
    if (!slot) return;
    const next = slot.waiting.shift();
    if (next) return next();
    slot.running--;
    if (slot.running === 0) slots.delete(endpointId);
  }
  const now = () => deps.now?.() ?? new Date();

  async function prepare(command: DeliverWebhook): Promise<Prepared> {
    const target = await findTarget(deps.db, command.event_id);
    if (!target) return { kind: 'skip', why: 'gone' };
    if (!command.replay && (target.attempts_made >= (command.attempt ?? 0) || target.status === 'success' || target.status === 'failed')) {
      return { kind: 'skip', why: 'done' };
    }
    if (target.endpoint_status === 'disabled') return { kind: 'skip', why: 'disabled' };
    if (!(await acquire(target.endpoint_id))) return { kind: 'busy' };
    try {
      const sentAt = now();
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signedHeaders({ id: target.id, timestamp: Math.floor(sentAt.getTime() / 1000), body: target.body, secrets: secretsOf(target, sentAt) }),
      };
      const result = await deps.client.post(target.endpoint, target.body, headers);
      return { kind: 'attempted', result, sentAt, endpointFailing: target.failing_since !== null };
    } finally {
      release(target.endpoint_id);
    }
  }

  // Sealed secrets are immutable strings (a rotation seals a new one), so their plaintext can be kept.
  const opened = new Map<string, string>();
  function open(sealed: string): string {
    let secret = opened.get(sealed);
    if (secret === undefined) {
      secret = deps.box.open(sealed);
      if (opened.size >= 10_000) opened.clear();
      opened.set(sealed, secret);
    }
    return secret;
  }

  /** The current secret first; during the 24 h after a rotation, the previous one second. */
  function secretsOf(target: Target, at: Date): string[] {
    const secrets = [open(target.secret_encrypted)];
    if (target.previous_secret_encrypted && target.previous_secret_expires_at && target.previous_secret_expires_at > at) {
      secrets.push(open(target.previous_secret_encrypted));
    }
    return secrets;
  }

  async function record(trx: Transaction<DispatcherDb>, command: DeliverWebhook, teamId: string, prepared: Prepared): Promise<void> {
    if (prepared.kind === 'busy') {
      const due = new Date(now().getTime() + BUSY_WAIT_MS * (1 + (deps.random ?? Math.random)()));
      await scheduleDelivery(trx, teamId, command, due);
      // A first attempt still waiting is not stale: keep the sweeper off it.
      if (command.attempt === 1 && !command.replay) {
        await trx.updateTable('webhook_events').set({ next_attempt_at: due }).where('id', '=', command.event_id).where('attempts_made', '=', 0).execute();
      }
      return;
    }
    if (prepared.kind === 'skip') {
      // Retries of an endpoint that got disabled stop here; the event stays replayable.
      if (prepared.why === 'disabled' && !command.replay) {
        await trx
          .updateTable('webhook_events')
          .set({ status: 'failed', next_attempt_at: null, updated_at: new Date() })
          .where('id', '=', command.event_id)
          .where('status', 'in', ['pending', 'attempting'])
          .execute();
      }
      return;
    }
    const { result, sentAt } = prepared;
    const event = command.replay ? await lockEvent(trx, command.event_id) : await settleAttempt(trx, command, result.ok, sentAt);
    // Gone, or a duplicate command whose twin already recorded this attempt (its POST was one more
    // at-least-once delivery).
    if (!event) return;
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
    // The hot path (a success on a healthy endpoint) leaves the endpoint row alone.
    if (!result.ok || prepared.endpointFailing) await trackEndpoint(trx, event.endpoint_id, result.ok, sentAt);
  }

  /**
   * Moves the event past scheduled attempt `n` in one statement, only if that attempt is not recorded
   * yet: success, the next retry with its timer, or failed after the eighth.
   */
  async function settleAttempt(trx: Transaction<DispatcherDb>, command: DeliverWebhook, ok: boolean, sentAt: Date): Promise<EventRow | undefined> {
    const attempt = command.attempt ?? 1;
    const delay = ok ? undefined : retryDelayMs(attempt, deps.scale, (deps.random ?? Math.random)());
    const next = delay === undefined || attempt >= MAX_ATTEMPTS ? null : new Date(sentAt.getTime() + delay);
    const status = ok ? 'success' : next ? 'attempting' : 'failed';
    const event = await trx
      .updateTable('webhook_events')
      .set({ status, attempts_made: attempt, next_attempt_at: next, updated_at: new Date() })
      .where('id', '=', command.event_id)
      .where('attempts_made', '<', attempt)
      .returningAll()
      .executeTakeFirst();
    if (event && next) await scheduleDelivery(trx, event.team_id, { event_id: event.id, attempt: attempt + 1, replay: false }, next);
    return event;
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

  function deliverNow(eventId: string, teamId: string): void {
    const command: DeliverWebhook = { event_id: eventId, attempt: 1, replay: false };
    prepare(command)
      .then((prepared) => deps.db.transaction().execute((trx) => record(trx, command, teamId, prepared)))
      .catch((err: unknown) => deps.logger.warn({ err, event_id: eventId }, 'first attempt failed to run; the sweeper will retry it'));
  }

  const consumer = createConsumer<DispatcherDb, 'webhook-dispatcher.deliver', Prepared>({
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
  return { consumer, deliverNow };
}

/** A first attempt that never ran (its process died) is swept after this long. */
export const FIRST_ATTEMPT_STALE_MS = 30_000;

/**
 * Recovers first attempts that `deliverNow` started but never recorded: events still pending, never
 * attempted, and untouched for FIRST_ATTEMPT_STALE_MS get a `webhook-dispatcher.deliver` command through
 * the outbox. Replicas share the work with SKIP LOCKED.
 */
export function createFirstAttemptSweeper(deps: { db: Kysely<DispatcherDb>; logger: Logger; everyMs?: number; staleMs?: number }) {
  const everyMs = deps.everyMs ?? 10_000;
  const staleMs = deps.staleMs ?? FIRST_ATTEMPT_STALE_MS;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function sweep(): Promise<number> {
    return deps.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: string; team_id: string }>`with stale as (
          select id from webhook_events
          where status = 'pending' and attempts_made = 0 and next_attempt_at < now() - make_interval(secs => ${staleMs / 1000})
          order by next_attempt_at limit 500 for update skip locked)
        update webhook_events e set next_attempt_at = now(), updated_at = now() from stale where e.id = stale.id
        returning e.id, e.team_id`.execute(trx);
      await enqueue(
        trx,
        rows.map((row) => ({
          exchange: 'commands' as const,
          type: 'webhook-dispatcher.deliver' as const,
          team_id: row.team_id,
          data: { event_id: row.id, attempt: 1, replay: false },
        })),
      );
      return rows.length;
    });
  }

  return {
    sweep,
    start() {
      timer = setInterval(() => {
        if (running) return;
        running = sweep()
          .then((n) => {
            if (n > 0) deps.logger.warn({ events: n }, 'swept first attempts that never ran');
          })
          .catch((err: unknown) => deps.logger.error({ err }, 'first-attempt sweep failed'))
          .finally(() => (running = undefined));
      }, everyMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}

function attemptTimerKey(eventId: string): string {
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
