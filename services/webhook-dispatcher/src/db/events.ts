import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import { paginate, PREPARED, type Page } from '@postline/platform';
import type {
  AttemptRow,
  DispatcherDb,
  EndpointRow,
  EventRow,
  WebhookAttemptsTable,
  WebhookEventStatus,
  WebhookEventsTable,
} from './schema.ts';

type Db = Kysely<DispatcherDb> | Transaction<DispatcherDb>;

/**
 * One event with what delivering it needs from its endpoint. The fan-out builds it from the endpoint row
 * it read (its record not written yet); a delivery command reads it with findDeliveryTarget.
 */
export type DeliveryTarget = {
  event: Pick<EventRow, 'id' | 'team_id' | 'endpoint_id' | 'body' | 'status' | 'attempts_made'>;
  endpoint: Pick<
    EndpointRow,
    | 'endpoint'
    | 'status'
    | 'secret_encrypted'
    | 'previous_secret_encrypted'
    | 'previous_secret_expires_at'
    | 'failing_since'
  >;
};

/** An event and its endpoint, read in one query. */
export async function findDeliveryTarget(db: Db, eventId: string): Promise<DeliveryTarget | undefined> {
  const row = await db
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
  if (!row) return undefined;
  const {
    endpoint,
    endpoint_status,
    secret_encrypted,
    previous_secret_encrypted,
    previous_secret_expires_at,
    failing_since,
    ...event
  } = row;
  return {
    event,
    endpoint: {
      endpoint,
      status: endpoint_status,
      secret_encrypted,
      previous_secret_encrypted,
      previous_secret_expires_at,
      failing_since,
    },
  };
}

/** A new event record; `attempt` when its first attempt was made before it was written. */
export type NewEventRow = Pick<
  Insertable<WebhookEventsTable>,
  | 'id'
  | 'endpoint_id'
  | 'team_id'
  | 'source_event_id'
  | 'type'
  | 'body'
  | 'status'
  | 'attempts_made'
  | 'next_attempt_at'
  | 'failure_reason'
> & {
  attempt?: Pick<AttemptRow, 'id' | 'sent_at' | 'http_status_code' | 'response' | 'error' | 'duration_ms'>;
};

/**
 * Inserts the records that do not exist yet (one per endpoint and source event) of endpoints that still
 * exist, and the first attempt of each that has one; returns the ids of the new records. One prepared
 * statement whatever the number of rows: they travel as one JSON parameter, so the text (and its plan) is
 * the same for every batch and nothing is compiled per row.
 */
export async function insertEvents(trx: Transaction<DispatcherDb>, rows: NewEventRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const values = rows.map(({ attempt, ...row }) => ({
    ...row,
    attempt_id: attempt?.id,
    sent_at: attempt?.sent_at,
    http_status_code: attempt?.http_status_code,
    response: attempt?.response,
    error: attempt?.error,
    duration_ms: attempt?.duration_ms,
  }));
  const { rows: created } = await sql<{ id: string }>`with v as (
      select * from json_to_recordset(${JSON.stringify(values)}::json) as v (id text, endpoint_id uuid, team_id uuid,
        source_event_id uuid, type text, body text, status text, attempts_made int, next_attempt_at timestamptz,
        failure_reason text, attempt_id text, sent_at timestamptz, http_status_code int, response text, error text, duration_ms int)),
    -- Only for endpoints that still exist: the list was read before the first attempts, and one deleted
    -- since then would otherwise fail the whole batch on the foreign key.
    created as (insert into webhook_events (id, endpoint_id, team_id, source_event_id, type, body, status, attempts_made, next_attempt_at, failure_reason)
      select v.id, v.endpoint_id, v.team_id, v.source_event_id, v.type, v.body, v.status, v.attempts_made, v.next_attempt_at, v.failure_reason
      from v join webhook_endpoints p on p.id = v.endpoint_id
      on conflict (endpoint_id, source_event_id) do nothing
      returning id),
    attempts as (insert into webhook_attempts (id, event_id, endpoint_id, attempt, replay, sent_at, http_status_code, response, error, duration_ms)
      select v.attempt_id, v.id, v.endpoint_id, 1, false, v.sent_at, v.http_status_code, v.response, v.error, v.duration_ms
      from v join created on created.id = v.id where v.attempt_id is not null)
    select ${PREPARED} id from created`.execute(trx);
  return created.map((row) => row.id);
}

/** A scheduled attempt's outcome, for recordScheduledAttempts. */
export type ScheduledAttempt = {
  event_id: string;
  attempt: number;
  status: WebhookEventStatus;
  next_attempt_at: Date | null;
  attempt_id: string;
  sent_at: Date;
  http_status_code: number | null;
  response: string;
  error: string | null;
  duration_ms: number;
};

/**
 * Moves each event past its scheduled attempt and records that attempt, in one statement: only events
 * whose attempt is not recorded yet move (a duplicate command records nothing), and only their attempts are
 * inserted. Returns the events that moved. The event ids are given once more as an array so that the
 * planner probes the primary key (it estimates any json_to_recordset at 100 rows). Not PREPARED: a generic
 * plan made while the table is small would keep scanning it once it has grown (see PREPARED).
 */
export async function recordScheduledAttempts(
  db: Db,
  attempts: ScheduledAttempt[],
): Promise<Pick<EventRow, 'id' | 'endpoint_id' | 'team_id'>[]> {
  if (attempts.length === 0) return [];
  const { rows } = await sql<Pick<EventRow, 'id' | 'endpoint_id' | 'team_id'>>`with v as (
      select * from json_to_recordset(${JSON.stringify(attempts)}::json) as v (event_id text, attempt int, status text,
        next_attempt_at timestamptz, attempt_id text, sent_at timestamptz, http_status_code int, response text,
        error text, duration_ms int)),
    moved as (update webhook_events e
      set status = v.status, attempts_made = v.attempt, next_attempt_at = v.next_attempt_at, updated_at = now()
      from v where e.id = any(${attempts.map((a) => a.event_id)}::text[]) and e.id = v.event_id and e.attempts_made < v.attempt
      returning e.id, e.endpoint_id, e.team_id),
    recorded as (insert into webhook_attempts (id, event_id, endpoint_id, attempt, replay, sent_at, http_status_code, response, error, duration_ms)
      select v.attempt_id, moved.id, moved.endpoint_id, v.attempt, false, v.sent_at, v.http_status_code, v.response, v.error, v.duration_ms
      from moved join v on v.event_id = moved.id)
    select id, endpoint_id, team_id from moved`.execute(db);
  return rows;
}

export async function findEvent(db: Db, endpointId: string, id: string): Promise<EventRow | undefined> {
  return db
    .selectFrom('webhook_events')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function lockEvent(trx: Transaction<DispatcherDb>, id: string): Promise<EventRow | undefined> {
  return trx.selectFrom('webhook_events').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** An endpoint's events, newest first; only those in `status` when given. */
export async function listEvents(
  db: Db,
  endpointId: string,
  query: { limit?: number; after?: string; before?: string; status?: WebhookEventStatus },
): Promise<Page<EventRow>> {
  let events = db.selectFrom('webhook_events').selectAll().where('endpoint_id', '=', endpointId);
  if (query.status) events = events.where('status', '=', query.status);
  return paginate(events, query);
}

export async function updateEvent(db: Db, id: string, patch: Updateable<WebhookEventsTable>): Promise<EventRow> {
  return db
    .updateTable('webhook_events')
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertAttempt(db: Db, row: Insertable<WebhookAttemptsTable>): Promise<void> {
  await db.insertInto('webhook_attempts').values(row).execute();
}

export async function listAttempts(
  db: Db,
  eventId: string,
  query: { limit?: number; after?: string; before?: string },
): Promise<Page<AttemptRow>> {
  return paginate(db.selectFrom('webhook_attempts').selectAll().where('event_id', '=', eventId), query);
}

/** A first attempt still waiting for a slot is not stale: moves its event's time so the sweeper keeps off it. */
export async function postponeFirstAttempt(trx: Transaction<DispatcherDb>, eventId: string, due: Date): Promise<void> {
  await trx
    .updateTable('webhook_events')
    .set({ next_attempt_at: due })
    .where('id', '=', eventId)
    .where('attempts_made', '=', 0)
    .execute();
}

/** Ends an event whose endpoint got disabled before it was delivered (it stays replayable). */
export async function failUnfinishedEvent(trx: Transaction<DispatcherDb>, eventId: string): Promise<void> {
  await trx
    .updateTable('webhook_events')
    .set({ status: 'failed', next_attempt_at: null, failure_reason: 'endpoint_disabled', updated_at: new Date() })
    .where('id', '=', eventId)
    .where('status', 'in', ['pending', 'attempting'])
    .execute();
}

/**
 * Up to 500 events still pending, never attempted and untouched for `staleMs`: their first attempt, made in
 * process, was never recorded. Locked with SKIP LOCKED (replicas share the work) and touched, so the next
 * sweep leaves them alone for another `staleMs`.
 */
export async function claimStaleFirstAttempts(
  trx: Transaction<DispatcherDb>,
  staleMs: number,
): Promise<Pick<EventRow, 'id' | 'team_id'>[]> {
  const { rows } = await sql<{ id: string; team_id: string }>`with stale as (
          select id from webhook_events
          where status = 'pending' and attempts_made = 0 and next_attempt_at < now() - make_interval(secs => ${staleMs / 1000})
          order by next_attempt_at limit 500 for update skip locked)
        update webhook_events e set next_attempt_at = now(), updated_at = now() from stale where e.id = stale.id
        returning e.id, e.team_id`.execute(trx);
  return rows;
}

/** Events not yet delivered or failed: how many, and the age of the oldest in seconds (0 when none). */
export async function readUndelivered(db: Db): Promise<{ count: number; oldestAgeSeconds: number }> {
  const { rows } = await sql<{
    undelivered: number;
    oldest_age_seconds: number | null;
  }>`select count(*)::int as undelivered,
      extract(epoch from now() - min(created_at))::float8 as oldest_age_seconds
      from webhook_events where status in ('pending', 'attempting')`.execute(db);
  return { count: rows[0]?.undelivered ?? 0, oldestAgeSeconds: Math.max(0, rows[0]?.oldest_age_seconds ?? 0) };
}

/**
 * Up to `limit` + 1 of an endpoint's failed events created at or after `since`, oldest first (the extra one tells
 * where the next call starts). Reads the partial index of failed events (webhook_events_failed_idx).
 */
export async function failedEventsSince(
  db: Db,
  endpointId: string,
  since: Date,
  limit: number,
): Promise<Pick<EventRow, 'id' | 'created_at'>[]> {
  return db
    .selectFrom('webhook_events')
    .select(['id', 'created_at'])
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'failed')
    .where('created_at', '>=', since)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .limit(limit + 1)
    .execute();
}

/** A new event record of its own, not from a public event (a test event): pending, its first attempt due now. */
export async function insertTestEvent(
  db: Db,
  row: Pick<Insertable<WebhookEventsTable>, 'id' | 'endpoint_id' | 'team_id' | 'source_event_id' | 'type' | 'body'>,
): Promise<void> {
  await db
    .insertInto('webhook_events')
    .values({ ...row, status: 'pending', attempts_made: 0, next_attempt_at: new Date() })
    .execute();
}

/**
 * The records of the given source events at the team's endpoints (with each endpoint's URL), oldest first:
 * one probe of (endpoint_id, source_event_id) per endpoint of the team.
 */
export function findDeliveriesOfSources(db: Db, teamId: string, sourceEventIds: readonly string[]) {
  return db
    .selectFrom('webhook_events as e')
    .innerJoin('webhook_endpoints as w', 'w.id', 'e.endpoint_id')
    .select([
      'e.id',
      'e.endpoint_id',
      'w.endpoint',
      'e.source_event_id',
      'e.type',
      'e.status',
      'e.attempts_made',
      'e.next_attempt_at',
      'e.created_at',
    ])
    .where('w.team_id', '=', teamId)
    .where('e.team_id', '=', teamId)
    .where('e.source_event_id', 'in', [...sourceEventIds])
    .orderBy('e.created_at')
    .orderBy('e.id')
    .execute();
}
