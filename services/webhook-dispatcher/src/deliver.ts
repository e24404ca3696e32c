// One delivery attempt per `webhook-dispatcher.deliver` command: the HTTP POST runs before the
// transaction (no transaction is held across a 15 s wait); its outcome, the event's next state, the
// endpoint's failure streak and the next retry timer commit together.
import type { Kysely, Transaction } from 'kysely';
import type { DeliverWebhook } from '@postline/contracts';
import { sql } from 'kysely';
import {
  createBatcher,
  createConsumer,
  enqueue,
  enqueueCommand,
  newId,
  timerMessage,
  waitInLine,
  type Broker,
  type Consumer,
  type Counter,
  type Histogram,
  type Logger,
  type OutboxMessage,
  type SecretBox,
} from '@postline/platform';
import { lockEndpoint, updateEndpoint } from './db/endpoints.ts';
import { insertAttempt, insertEvents, lockEvent, recordScheduledAttempts, updateEvent } from './db/events.ts';
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
  /** Deliveries in flight at once overall, in-process first attempts included (also the consumer prefetch). */
  overall: number;
  /**
   * In-process first attempts (`begin`) under way at once (waiting, posting, being recorded). At this
   * many, `admit` holds the fan-out back, so a burst waits in its durable queue rather than in memory.
   * Default 2,048.
   */
  inProcessLimit?: number;
  /**
   * How long an in-process first attempt waits in memory for a slot of its endpoint; past that it waits on
   * a short timer instead, as a busy command does, so a hanging endpoint cannot hold `inProcessLimit`.
   * Default 2 s.
   */
  inProcessWaitMs?: number;
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
export type Target = Pick<EventRow, 'id' | 'team_id' | 'endpoint_id' | 'body' | 'status' | 'attempts_made'> &
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

/** A first attempt made in process, started before its event's record is written. */
export type FirstAttempt = {
  /** Its outcome once the POST is over (or it waited too long for a slot); undefined if it failed to run. */
  readonly outcome: Promise<Prepared | undefined>;
  /** The outcome, once there is one. */
  settled?: Prepared;
};

/** A record the fan-out is about to write, with its first attempt when one was started beforehand. */
export type NewRecord = { target: Target & Pick<EventRow, 'source_event_id' | 'type'>; first?: FirstAttempt };

export type Deliveries = {
  /** Consumes `webhook-dispatcher.deliver` commands (retries, replays, busy waits, swept first attempts). */
  consumer: Consumer;
  /**
   * Starts the first attempt of an event whose record is not written yet (the fan-out's message stays
   * unacked until it is): a crash before the write redelivers the message, and the attempt is made again
   * with the same `webhook-id`. Never throws. Counts as in process until its record is written
   * (`writeRecords`) or it is discarded.
   */
  begin: (target: Target) => FirstAttempt;
  /**
   * Writes the records of new events in the caller's transaction, one statement for all: an event whose
   * first attempt is already over is written settled, with that attempt, its retry timer and its
   * endpoint's failure streak, so it is written once instead of inserted and then updated. The rest are
   * written pending; once the transaction has committed (the returned function) their attempts are made or
   * followed in process and recorded by update, with the first-attempt sweeper covering a crash in between.
   * An event whose record exists already (a redelivered copy) writes nothing.
   */
  writeRecords: (trx: Transaction<DispatcherDb>, records: NewRecord[]) => Promise<() => void>;
  /** Records that will not be written (their message is retried or was a duplicate): releases them. */
  discard: (records: NewRecord[]) => void;
  /** Resolves once there is room for more in-process first attempts (the fan-out awaits it first). */
  admit: () => Promise<void>;
  /** Lets in-process first attempts finish (bounded) and records their outcomes. */
  stop: () => Promise<void>;
};

/** What one delivery needs recorded once its POST is over. */
type Outcome = { command: DeliverWebhook; teamId: string; prepared: Prepared };

export function createDeliveries(deps: DeliverDeps): Deliveries {
  const slots = new Map<string, { running: number; waiting: (() => void)[] }>();
  const overall = { running: 0, waiting: [] as (() => void)[] };
  const inProcessLimit = deps.inProcessLimit ?? 2048;
  const inProcessWaitMs = deps.inProcessWaitMs ?? 2_000;
  let inProcess = 0;
  const admissions: (() => void)[] = [];

  /**
   * A delivery slot of this endpoint: at once, or after waiting behind at most `maxWaiting` others for at
   * most `maxWaitMs`; else none. Then one of the `overall` slots, waiting as long as it takes (every
   * holder is a POST with a deadline).
   */
  async function acquire(endpointId: string, maxWaiting: number, maxWaitMs?: number): Promise<boolean> {
    const slot = slots.get(endpointId) ?? { running: 0, waiting: [] };
    slots.set(endpointId, slot);
    if (slot.running < deps.perEndpoint) slot.running++;
    else if (slot.waiting.length >= maxWaiting) return false;
    else {
      // The releasing delivery hands its slot over: `running` stays the same.
      if (!(await waitInLine(slot.waiting, maxWaitMs))) return false;
    }
    if (overall.running < deps.overall) overall.running++;
    else await waitInLine(overall.waiting);
    return true;
  }

  function release(endpointId: string): void {
    const nextOverall = overall.waiting.shift();
    if (nextOverall) nextOverall();
    else overall.running--;
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
    return attempt(target, command, deps.perEndpoint);
  }

  async function attempt(target: Target, command: DeliverWebhook, maxWaiting: number, maxWaitMs?: number): Promise<Prepared> {
    if (!command.replay && (target.attempts_made >= (command.attempt ?? 0) || target.status === 'success' || target.status === 'failed')) {
      return { kind: 'skip', why: 'done' };
    }
    if (target.endpoint_status === 'disabled') return { kind: 'skip', why: 'disabled' };
    if (!(await acquire(target.endpoint_id, maxWaiting, maxWaitMs))) return { kind: 'busy' };
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

  /**
   * Attempts whose outcomes a transaction records; they are counted in the metrics once it has committed
   * (`tally`), since a failed batch is recorded again one outcome at a time.
   */
  type Tally = { replay: boolean; result: PostResult }[];
  const tally = (counted: Tally) => () => counted.forEach(({ replay, result }) => count(replay, result));

  async function record(trx: Transaction<DispatcherDb>, command: DeliverWebhook, teamId: string, prepared: Prepared, counted: Tally): Promise<void> {
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
    // A scheduled attempt is recorded as in a batch (one statement moves the event and records the attempt).
    if (!command.replay) return recordMany(trx, [{ command, teamId, prepared }], counted);
    const { result, sentAt } = prepared;
    const event = await lockEvent(trx, command.event_id);
    if (!event) return;
    await insertAttempt(trx, {
      id: newAttemptId(),
      event_id: event.id,
      endpoint_id: event.endpoint_id,
      attempt: null,
      replay: true,
      sent_at: sentAt,
      http_status_code: result.status,
      response: result.body,
      error: result.error ?? null,
      duration_ms: Math.round(result.durationMs),
    });
    counted.push({ replay: true, result });
    await afterReplay(trx, event, result.ok);
    if (!result.ok || prepared.endpointFailing) await trackEndpoint(trx, event.endpoint_id, result.ok, sentAt);
  }

  type Attempted = Extract<Prepared, { kind: 'attempted' }>;
  type Scheduled = Outcome & { prepared: Attempted };
  /** A scheduled attempt recorded, with its event and what comes next. */
  type Recorded = { event: Pick<EventRow, 'id' | 'endpoint_id' | 'team_id'>; attempt: number; next: Date | null; prepared: Attempted };

  /** The first outcome of each event's scheduled attempt, apart from the rest (replays, busy, skips, twins). */
  function split(outcomes: Outcome[]): { scheduled: Scheduled[]; others: Outcome[] } {
    const scheduled: Scheduled[] = [];
    const others: Outcome[] = [];
    const seen = new Set<string>();
    for (const o of outcomes) {
      if (o.prepared.kind === 'attempted' && !o.command.replay && !seen.has(o.command.event_id)) {
        seen.add(o.command.event_id);
        scheduled.push({ ...o, prepared: o.prepared });
      } else {
        others.push(o);
      }
    }
    return { scheduled, others };
  }

  /**
   * Settles the events of scheduled attempts and records the attempts, in one statement (atomic on its
   * own); returns those recorded, each with its event and plan.
   */
  async function settleScheduled(db: Kysely<DispatcherDb>, scheduled: Scheduled[], counted: Tally) {
    const plans = scheduled.map((o) => ({ ...o, ...plan(o.command.attempt ?? 1, o.prepared.result.ok, o.prepared.sentAt) }));
    const moved = await recordScheduledAttempts(
      db,
      plans.map(({ command, attempt, status, next, prepared: { result, sentAt } }) => ({
        event_id: command.event_id,
        attempt,
        status,
        next_attempt_at: next,
        attempt_id: newAttemptId(),
        sent_at: sentAt,
        http_status_code: result.status,
        response: result.body,
        error: result.error ?? null,
        duration_ms: Math.round(result.durationMs),
      })),
    );
    const settled = new Map(moved.map((row) => [row.id, row]));
    // Gone, or a duplicate command whose twin already recorded this attempt: nothing was recorded.
    const recorded = plans.flatMap((p) => {
      const event = settled.get(p.command.event_id);
      return event ? [{ ...p, event }] : [];
    });
    for (const { prepared } of recorded) counted.push({ replay: false, result: prepared.result });
    return recorded;
  }

  /**
   * `record` for many outcomes in one transaction. Scheduled attempts (the hot path) settle their events
   * and record their attempts with one statement, and their retry timers with one outbox write; replays,
   * busy waits, skips and a second outcome for the same event in the batch go through `record`.
   */
  async function recordMany(trx: Transaction<DispatcherDb>, outcomes: Outcome[], counted: Tally): Promise<void> {
    const { scheduled, others } = split(outcomes);
    if (scheduled.length > 0) await followUp(trx, await settleScheduled(trx, scheduled, counted));
    for (const o of others) await record(trx, o.command, o.teamId, o.prepared, counted);
  }

  /** After recorded scheduled attempts: the next retry's timer of each failed one, and the endpoints' failure streaks. */
  async function followUp(trx: Transaction<DispatcherDb>, recorded: Recorded[]): Promise<void> {
    await enqueue(
      trx,
      recorded.flatMap(({ event, attempt, next }) => (next ? [deliveryTimer(event.team_id, { event_id: event.id, attempt: attempt + 1, replay: false }, next)] : [])),
    );
    // Endpoint rows are locked in id order, so two batches cannot deadlock on them.
    const tracked = recorded.filter((r) => !r.prepared.result.ok || r.prepared.endpointFailing);
    tracked.sort((a, b) => (a.event.endpoint_id < b.event.endpoint_id ? -1 : a.event.endpoint_id > b.event.endpoint_id ? 1 : 0));
    for (const r of tracked) await trackEndpoint(trx, r.event.endpoint_id, r.prepared.result.ok, r.prepared.sentAt);
  }

  /**
   * `recordMany` for outcomes of in-process first attempts. A batch of nothing but successes on healthy
   * endpoints (the usual one) writes a single statement, atomic on its own, so it skips the transaction's
   * two extra round trips.
   */
  async function recordFirstAttempts(outcomes: Outcome[]): Promise<void> {
    const { scheduled, others } = split(outcomes);
    const counted: Tally = [];
    if (others.length === 0 && scheduled.every((o) => o.prepared.result.ok && !o.prepared.endpointFailing)) {
      await settleScheduled(deps.db, scheduled, counted);
    } else {
      await deps.db.transaction().execute((trx) => recordMany(trx, outcomes, counted));
    }
    tally(counted)();
  }

  function count(replay: boolean, result: PostResult): void {
    const outcome = result.ok ? 'success' : 'failure';
    deps.metrics.deliveries.inc({ outcome: replay ? `replay_${outcome}` : outcome });
    deps.metrics.attemptDuration.observe({ outcome }, result.durationMs / 1000);
  }

  /** The event's state after scheduled attempt `attempt`: success, the next retry's time, or failed after the eighth. */
  function plan(attempt: number, ok: boolean, sentAt: Date): { attempt: number; status: EventRow['status']; next: Date | null } {
    const delay = ok ? undefined : retryDelayMs(attempt, deps.scale, (deps.random ?? Math.random)());
    const next = delay === undefined || attempt >= MAX_ATTEMPTS ? null : new Date(sentAt.getTime() + delay);
    return { attempt, status: ok ? 'success' : next ? 'attempting' : 'failed', next };
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

  /**
   * Outcomes of in-process first attempts, recorded in batches (one transaction for many). If a batch
   * fails, each outcome is recorded on its own; one that still fails is left to the sweeper. An outcome
   * waits up to 25 ms for others (the POST is already answered, so only the record waits): responses
   * arrive one at a time, and with a 5 ms wait a burst's batches held about 16; now about 50.
   */
  const results = createBatcher<Outcome>({
    maxItems: 64,
    maxWaitMs: 25,
    maxConcurrent: 2,
    flush: async (outcomes) => {
      try {
        await recordFirstAttempts(outcomes);
      } catch (err) {
        if (outcomes.length > 1) deps.logger.info({ err, outcomes: outcomes.length }, 'recording a batch of first attempts failed; recording them one by one');
        for (const o of outcomes) {
          const counted: Tally = [];
          await deps.db
            .transaction()
            .execute((trx) => record(trx, o.command, o.teamId, o.prepared, counted))
            .then(tally(counted))
            .catch((e: unknown) => deps.logger.warn({ err: e, event_id: o.command.event_id }, 'first attempt failed to record; the sweeper will retry it'));
        }
      }
    },
  });
  const attempting = new Set<Promise<void>>();
  const commands = new WeakMap<FirstAttempt, { command: DeliverWebhook; teamId: string }>();

  function begin(target: Target): FirstAttempt {
    const command: DeliverWebhook = { event_id: target.id, attempt: 1, replay: false };
    inProcess++;
    const first: { outcome: Promise<Prepared | undefined>; settled?: Prepared } = {
      outcome: attempt(target, command, Number.POSITIVE_INFINITY, inProcessWaitMs).then(
        (prepared) => (first.settled = prepared),
        (err: unknown) => {
          deps.logger.warn({ err, event_id: target.id }, 'first attempt failed to run; the sweeper will retry it');
          return undefined;
        },
      ),
    };
    commands.set(first, { command, teamId: target.team_id });
    return first;
  }

  /**
   * The end of a first attempt's time in process: once it is over, its outcome goes to the batcher to be
   * recorded (`record`, for an event written pending) or nowhere (written settled, or not written).
   */
  function end(first: FirstAttempt, record: boolean): void {
    const { command, teamId } = commands.get(first)!;
    const run = first.outcome
      .then((prepared) => (record && prepared ? results.add({ command, teamId, prepared }) : undefined))
      .catch((err: unknown) => deps.logger.warn({ err, event_id: command.event_id }, 'first attempt failed to record; the sweeper will retry it'))
      .finally(() => {
        inProcess--;
        attempting.delete(run);
        // One waiting fan-out message per freed place (a message may add several); all once idle.
        if (inProcess === 0) admissions.splice(0).forEach((admitted) => admitted());
        else if (inProcess < inProcessLimit) admissions.shift()?.();
      });
    attempting.add(run);
  }

  async function writeRecords(trx: Transaction<DispatcherDb>, records: NewRecord[]): Promise<() => void> {
    const rows = records.map(({ target, first }) => {
      const done = first?.settled?.kind === 'attempted' ? first.settled : undefined;
      return { target, first, done, plan: done && plan(1, done.result.ok, done.sentAt) };
    });
    const created = new Set(
      await insertEvents(
        trx,
        rows.map(({ target, done, plan }) => ({
          id: target.id,
          endpoint_id: target.endpoint_id,
          team_id: target.team_id,
          source_event_id: target.source_event_id,
          type: target.type,
          body: target.body,
          status: plan?.status ?? 'pending',
          attempts_made: plan ? 1 : 0,
          next_attempt_at: plan ? plan.next : new Date(),
          attempt: done && {
            id: newAttemptId(),
            sent_at: done.sentAt,
            http_status_code: done.result.status,
            response: done.result.body,
            error: done.result.error ?? null,
            duration_ms: Math.round(done.result.durationMs),
          },
        })),
      ),
    );
    const settled = rows.flatMap(({ target, done, plan }) =>
      done && plan && created.has(target.id) ? [{ event: target, attempt: 1, next: plan.next, prepared: done }] : [],
    );
    await followUp(trx, settled);
    return () => {
      for (const { prepared } of settled) count(false, prepared.result);
      for (const { target, first, done } of rows) {
        if (!first) {
          if (created.has(target.id)) end(begin(target), true);
        } else end(first, created.has(target.id) && !done);
      }
    };
  }

  function discard(records: NewRecord[]): void {
    for (const { first } of records) if (first) end(first, false);
  }

  function admit(): Promise<void> {
    if (inProcess < inProcessLimit) return Promise.resolve();
    return new Promise((resolve) => admissions.push(resolve));
  }

  async function stop(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, 5_000)));
    await Promise.race([Promise.all([...attempting]), deadline]);
    clearTimeout(timer);
    await results.drain();
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
      const counted: Tally = [];
      await record(trx, message.data, message.team_id, prepared, counted);
      return tally(counted);
    },
    batch: {
      maxMessages: 32,
      maxWaitMs: 5,
      handle: async (items, trx) => {
        const outcomes = items.flatMap(({ message, prepared }) => (message.team_id ? [{ command: message.data, teamId: message.team_id, prepared }] : []));
        const counted: Tally = [];
        await recordMany(trx, outcomes, counted);
        return tally(counted);
      },
    },
  });
  return { consumer, begin, writeRecords, discard, admit, stop };
}

/** A first attempt that never ran (its process died) is swept after this long. */
export const FIRST_ATTEMPT_STALE_MS = 30_000;

/**
 * Recovers first attempts started in process whose outcome was never recorded: events still pending, never
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
  await enqueue(trx, [deliveryTimer(teamId, command, due)]);
}

/** The outbox message of a `scheduler.set-timer` that sends `command` at `due`. */
function deliveryTimer(teamId: string, command: DeliverWebhook, due: Date): OutboxMessage {
  // Retries of an event share one timer key (a newer schedule replaces it); a deferred replay gets its own.
  const key = command.replay ? `webhook-replay:${command.event_id}:${newId()}` : attemptTimerKey(command.event_id);
  return timerMessage(teamId, key, due, 'webhook-dispatcher.deliver', command);
}
