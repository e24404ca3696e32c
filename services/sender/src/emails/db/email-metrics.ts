// The counts behind GET /emails/metrics (kept by the outbox's trigger, migration 202612071100) and the
// events behind an email's timeline.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { SenderDb } from '../../db/schema.ts';

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * Folds up to `limit` of the oldest deltas into their counters and deletes them, in one statement: the
 * deltas are taken with skip locked, so concurrent folds (one per sender replica) never count one twice.
 * Returns how many deltas were folded.
 */
export async function foldMetricDeltas(db: Kysely<SenderDb>, limit: number): Promise<number> {
  const { rows } = await sql<{ folded: number }>`
    with taken as (
      delete from email_metric_deltas where id in (
        select id from email_metric_deltas order by id limit ${limit} for update skip locked)
      returning team_id, hour, domain_id, broadcast_id, provider, metric, n
    ), summed as (
      select team_id, hour, domain_id, broadcast_id, provider, metric, sum(n) as n, count(*) as deltas
      from taken group by team_id, hour, domain_id, broadcast_id, provider, metric
    ), added as (
      insert into email_metrics (team_id, hour, domain_id, broadcast_id, provider, metric, n)
      select team_id, hour, domain_id, broadcast_id, provider, metric, n from summed
      order by team_id, hour, domain_id, broadcast_id, provider, metric
      on conflict (team_id, hour, domain_id, broadcast_id, provider, metric)
        do update set n = email_metrics.n + excluded.n
    )
    select coalesce(sum(deltas), 0)::int as folded from summed`.execute(db);
  return rows[0]?.folded ?? 0;
}

/** Adds to a counter at `at` (for what no email event counts, such as an unsubscribe). */
export async function addMetricDelta(
  trx: Transaction<SenderDb>,
  delta: {
    teamId: string;
    at: Date;
    domainId?: string | undefined;
    broadcastId?: string | undefined;
    provider?: string | null | undefined;
    metric: string;
    n: number;
  },
): Promise<void> {
  await sql`insert into email_metric_deltas (team_id, hour, domain_id, broadcast_id, provider, metric, n)
    values (${delta.teamId}, date_trunc('hour', ${delta.at}::timestamptz, 'UTC'), ${delta.domainId ?? NIL_UUID},
      ${delta.broadcastId ?? NIL_UUID}, ${delta.provider ?? ''}, ${delta.metric}, ${delta.n})`.execute(trx);
}

export type CountQuery = {
  teamId: string;
  /** [from, to) in UTC. */
  from: Date;
  to: Date;
  timezone: string;
  /** date_trunc's unit for the periods; undefined when rows are not split by period. */
  unit: 'hour' | 'day' | 'week' | 'month' | undefined;
  byDomain: boolean;
  byBroadcast: boolean;
  byProvider: boolean;
  byEmail: boolean;
  domainIds?: string[] | undefined;
  broadcastIds?: string[] | undefined;
  emailIds?: string[] | undefined;
};

export type CountRow = {
  period: string | null;
  domain_id: string | null;
  broadcast_id: string | null;
  provider: string | null;
  email_id: string | null;
  metric: string;
  n: number;
};

/**
 * The stored counts of `query`'s range summed by its dimensions and metric. From the counters and the
 * deltas not folded yet; split by email, from the emails' kept events instead (the counters have no email).
 * A period is the local start of its day, week (Monday), month or hour in `timezone`, as text.
 */
export async function sumCounts(db: Kysely<SenderDb>, query: CountQuery): Promise<CountRow[]> {
  const local = sql`(hour at time zone ${query.timezone})`;
  const periodOf = (column: ReturnType<typeof sql>) =>
    query.unit
      ? sql`to_char(date_trunc(${query.unit}, ${column}), ${query.unit === 'hour' ? 'YYYY-MM-DD"T"HH24:00' : 'YYYY-MM-DD'})`
      : sql`null::text`;
  if (query.byEmail) {
    const { rows } = await sql<CountRow>`
      select ${periodOf(sql`(ev.occurred_at at time zone ${query.timezone})`)} as period,
        ${query.byDomain ? sql`e.domain_id::text` : sql`null::text`} as domain_id,
        ${query.byBroadcast ? sql`e.broadcast_id::text` : sql`null::text`} as broadcast_id,
        ${query.byProvider ? sql`coalesce(r.provider, '')` : sql`null::text`} as provider,
        ev.email_id::text as email_id, email_event_metric(ev.type, ev.data) as metric,
        sum(email_event_count(ev.type, ev.data,
          case when ev.type = 'email.sent' then email_recipient_count(ev.email_id) end))::float8 as n
      from email_events ev join emails e on e.id = ev.email_id
      left join lateral (select r.provider from recipients r
        where r.email_id = ev.email_id and r.address = ev.data->'to'->>0
          and ev.type in ('email.delivered', 'email.bounced', 'email.delivery_delayed', 'email.complained') limit 1) r on true
      where ev.email_id = any(${query.emailIds ?? []}::uuid[]) and ev.team_id = ${query.teamId}
        and ev.occurred_at >= ${query.from} and ev.occurred_at < ${query.to}
        ${query.domainIds ? sql`and e.domain_id = any(${query.domainIds}::uuid[])` : sql``}
        ${query.broadcastIds ? sql`and e.broadcast_id = any(${query.broadcastIds}::uuid[])` : sql``}
        and email_event_metric(ev.type, ev.data) is not null
      group by 1, 2, 3, 4, 5, 6
      union all
      select ${periodOf(sql`(first.occurred_at at time zone ${query.timezone})`)},
        ${query.byDomain ? sql`e.domain_id::text` : sql`null::text`},
        ${query.byBroadcast ? sql`e.broadcast_id::text` : sql`null::text`},
        ${query.byProvider ? sql`''` : sql`null::text`},
        first.email_id::text, case first.type when 'email.opened' then 'unique_opened' else 'unique_clicked' end, 1
      from (select distinct on (email_id, type) email_id, type, occurred_at from email_events
        where email_id = any(${query.emailIds ?? []}::uuid[]) and team_id = ${query.teamId}
          and type in ('email.opened', 'email.clicked') order by email_id, type, occurred_at) first
      join emails e on e.id = first.email_id
      where first.occurred_at >= ${query.from} and first.occurred_at < ${query.to}
        ${query.domainIds ? sql`and e.domain_id = any(${query.domainIds}::uuid[])` : sql``}`.execute(db);
    return rows;
  }
  const where = sql`team_id = ${query.teamId} and hour >= ${query.from} and hour < ${query.to}
    ${query.domainIds ? sql`and domain_id = any(${query.domainIds}::uuid[])` : sql``}
    ${query.broadcastIds ? sql`and broadcast_id = any(${query.broadcastIds}::uuid[])` : sql``}`;
  const { rows } = await sql<CountRow>`
    with counts as (
      select hour, domain_id, broadcast_id, provider, metric, n from email_metrics where ${where}
      union all
      select hour, domain_id, broadcast_id, provider, metric, n from email_metric_deltas where ${where}
    )
    select ${periodOf(local)} as period,
      ${query.byDomain ? sql`domain_id::text` : sql`null::text`} as domain_id,
      ${query.byBroadcast ? sql`nullif(broadcast_id, ${NIL_UUID}::uuid)::text` : sql`null::text`} as broadcast_id,
      ${query.byProvider ? sql`provider` : sql`null::text`} as provider,
      null::text as email_id, metric, sum(n)::float8 as n
    from counts group by 1, 2, 3, 4, 5, 6`.execute(db);
  return rows;
}

/** How many of an email's events its timeline lists, oldest first. */
export const EMAIL_EVENTS_SHOWN = 1_000;

/** An email's kept events, oldest first: EMAIL_EVENTS_SHOWN, and one more when there are more. */
export function listEmailEvents(db: Kysely<SenderDb>, teamId: string, emailId: string) {
  return db
    .selectFrom('email_events')
    .select(['id', 'type', 'occurred_at', 'data'])
    .where('email_id', '=', emailId)
    .where('team_id', '=', teamId)
    .orderBy('occurred_at')
    .orderBy('id')
    .limit(EMAIL_EVENTS_SHOWN + 1)
    .execute();
}
