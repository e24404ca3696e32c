import { sql, type Kysely } from 'kysely';

// Frozen. An email's events kept for its timeline, and the counts behind GET /emails/metrics, both written
// by the statement that puts email events into the outbox (a trigger on outbox), so that every event is
// kept and counted in the transaction that emits it, whichever use case emits it.
//
// email_events: each email event (its id is the outbox message's, the webhook's source event), with what
// it carries beyond the email's own fields.
//
// email_metric_deltas: counts added by each statement, by team, UTC hour, sending domain, broadcast, the
// recipient's mailbox provider and metric. Appended without conflicts, so that concurrent deliveries
// never wait on one counter row; folded every few seconds into email_metrics (one row per key), which the
// metrics are read from together with the deltas not folded yet.
//
// recipients.provider: the mailbox provider of the recipient's MX (gmail, microsoft, yahoo, apple, other),
// set when an attempt reaches it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table recipients add column provider text`.execute(db);
  await sql`create table email_events (
    id uuid primary key,
    team_id uuid not null,
    email_id uuid not null,
    type text not null,
    occurred_at timestamptz not null,
    data jsonb not null
  )`.execute(db);
  await sql`create index email_events_email on email_events (email_id, occurred_at)`.execute(db);
  await sql`create table email_metric_deltas (
    id bigint generated always as identity primary key,
    team_id uuid not null,
    hour timestamptz not null,
    domain_id uuid not null,
    broadcast_id uuid not null,
    provider text not null,
    metric text not null,
    n bigint not null
  )`.execute(db);
  await sql`create table email_metrics (
    team_id uuid not null,
    hour timestamptz not null,
    domain_id uuid not null,
    broadcast_id uuid not null,
    provider text not null,
    metric text not null,
    n bigint not null,
    primary key (team_id, hour, domain_id, broadcast_id, provider, metric)
  )`.execute(db);
  // The metric an email event counts toward, and how many: the recipients it names (a delivery event is
  // about some of the email's recipients), every recipient for email.sent, one for an open or a click.
  await sql`create function email_event_metric(type text, data jsonb) returns text language sql immutable as $$
    select case type
      when 'email.sent' then 'sent'
      when 'email.delivered' then 'delivered'
      when 'email.delivery_delayed' then 'delivery_delayed'
      when 'email.bounced' then 'bounced_' || lower(coalesce(data->'bounce'->>'type', 'undetermined'))
      when 'email.complained' then 'complained'
      when 'email.opened' then case when coalesce((data->>'machine_open')::boolean, false)
        then 'opened_by_machines' else 'opened_by_people' end
      when 'email.clicked' then case when coalesce((data->>'scanner_click')::boolean, false)
        then 'clicked_by_scanners' else 'clicked_by_people' end
      when 'email.suppressed' then 'suppressed'
      when 'email.failed' then 'failed'
    end
  $$`.execute(db);
  await sql`create function email_event_count(type text, data jsonb, recipients int) returns int language sql immutable as $$
    select case
      when type = 'email.sent' then recipients
      when type in ('email.opened', 'email.clicked') then 1
      else greatest(jsonb_array_length(coalesce(data->'to', '[]')), 1)
    end
  $$`.execute(db);
  // An email's first open and first click, so that unique_opened and unique_clicked count each email once:
  // of two transactions recording an email's first opens, the second waits on the key and adds nothing.
  await sql`create table email_first_engagements (
    email_id uuid not null,
    type text not null,
    primary key (email_id, type)
  )`.execute(db);
  // The recipients an email is sent to: its recipient rows (the envelope's, each address once).
  await sql`create function email_recipient_count(email uuid) returns int language sql stable as $$
    select count(*)::int from recipients where email_id = email
  $$`.execute(db);
  // The transition table has no statistics: left to itself the planner may hash the whole of emails for a
  // handful of events. Nested loops make each event one probe of emails' and recipients' keys. Hours are
  // UTC whatever the session's time zone.
  await sql`create function keep_email_events() returns trigger language plpgsql
    set search_path from current set enable_hashjoin = off set enable_mergejoin = off set timezone = 'UTC' as $$
  begin
    with ev as (
      select n.id, (n.envelope->>'team_id')::uuid as team_id, (n.envelope->'data'->>'email_id')::uuid as email_id,
        n.routing_key as type, (n.envelope->>'occurred_at')::timestamptz as occurred_at, n.envelope->'data' as data
      from new_rows n
      where n.exchange = 'events' and n.routing_key like 'email.%' and n.envelope->'data' ? 'email_id'
        and n.envelope->>'team_id' is not null
    ), kept as (
      -- Only the events kept now are counted: an event already kept (its outbox row written again) is not.
      insert into email_events (id, team_id, email_id, type, occurred_at, data)
      select id, team_id, email_id, type, occurred_at,
        data - array['email_id', 'from', 'subject', 'created_at', 'message_id', 'tags', 'headers', 'broadcast_id', 'template_id']
      from ev on conflict (id) do nothing
      returning id, team_id, email_id, type, occurred_at, data
    ), firsts as (
      insert into email_first_engagements (email_id, type)
      select distinct email_id, type from kept where type in ('email.opened', 'email.clicked')
      on conflict do nothing
      returning email_id, type
    ), counted as (
      select k.team_id, date_trunc('hour', k.occurred_at) as hour, e.domain_id,
        coalesce(e.broadcast_id, '00000000-0000-0000-0000-000000000000'::uuid) as broadcast_id,
        case when k.type in ('email.delivered', 'email.bounced', 'email.delivery_delayed', 'email.complained')
          then coalesce((select r.provider from recipients r
            where r.email_id = k.email_id and r.address = k.data->'to'->>0 limit 1), '') else '' end as provider,
        email_event_metric(k.type, k.data) as metric,
        email_event_count(k.type, k.data, case when k.type = 'email.sent' then email_recipient_count(k.email_id) end) as n
      from kept k join emails e on e.id = k.email_id
      union all
      -- An email's first open (or click) also counts toward unique_opened (unique_clicked).
      select k.team_id, date_trunc('hour', min(k.occurred_at)), e.domain_id,
        coalesce(e.broadcast_id, '00000000-0000-0000-0000-000000000000'::uuid), '',
        case k.type when 'email.opened' then 'unique_opened' else 'unique_clicked' end, 1
      from firsts f join kept k on k.email_id = f.email_id and k.type = f.type
      join emails e on e.id = k.email_id
      group by k.team_id, e.domain_id, e.broadcast_id, k.email_id, k.type
    )
    insert into email_metric_deltas (team_id, hour, domain_id, broadcast_id, provider, metric, n)
    select team_id, hour, domain_id, broadcast_id, provider, metric, sum(n)
    from counted where metric is not null
    group by team_id, hour, domain_id, broadcast_id, provider, metric;
    return null;
  end $$`.execute(db);
  await sql`create trigger outbox_keeps_email_events after insert on outbox
    referencing new table as new_rows for each statement execute function keep_email_events()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists outbox_keeps_email_events on outbox`.execute(db);
  await sql`drop function if exists keep_email_events()`.execute(db);
  await sql`drop function if exists email_event_count(text, jsonb, int)`.execute(db);
  await sql`drop function if exists email_recipient_count(uuid)`.execute(db);
  await sql`drop table if exists email_first_engagements`.execute(db);
  await sql`drop function if exists email_event_metric(text, jsonb)`.execute(db);
  await sql`drop table if exists email_metrics`.execute(db);
  await sql`drop table if exists email_metric_deltas`.execute(db);
  await sql`drop table if exists email_events`.execute(db);
  await sql`alter table recipients drop column if exists provider`.execute(db);
}
