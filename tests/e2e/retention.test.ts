// Data retention across the services: the operator sets a team's retention with the admin CLI, the gateway
// pushes it to the owners, and each owner's retention job deletes the rows its teams have kept too long.
// Rows are backdated in Postgres (as if written 40 days ago); those past their team's retention go with
// every row about them, and their neighbours (recent rows, and another team's with a longer retention)
// stay, as do the metrics counted from them. DMARC reports, received at the MX, are kept at least 90 days
// by the end of the period they cover.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import nodemailer from 'nodemailer';
import { sql, type Kysely } from 'kysely';
import type { Resend } from 'resend';
import { createDb, newId } from '@postline/platform';
import {
  createReceivingDomain,
  createVerifiedDomain,
  dataOf,
  observeBroker,
  startWebhookReceiver,
  testResend,
  useSystem,
  waitFor,
  type SharedSystem,
  type WebhookReceiver,
} from '@postline/testing';

jest.setTimeout(180_000);

// The shared system whose delays are shrunk: every service's retention job runs each second.
const world = useSystem({ env: { POSTLINE_DELAY_SCALE: '0.00002' } });
let system: SharedSystem;
let receiver: WebhookReceiver;
const dbs: Record<'gateway' | 'sender' | 'inbound' | 'dispatcher', Kysely<unknown>> = {} as never;
const stamp = Date.now().toString(36);

type Team = { id: string; key: string; resend: Resend; emails: { old: string; recent: string } };
const teams = {} as Record<'byDefault' | 'longer', Team>;
let inboundDomain = '';
const domains: Record<string, { id: string; name: string }> = {};
const received = { old: '', recent: '' };
/** When the old emails' requests were logged: their request logs are the ones before it. */
let betweenSends: Date;

async function api(team: Team, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${system.apiUrl}${path}`, { headers: { authorization: `Bearer ${team.key}` } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

async function count(db: Kysely<unknown>, query: ReturnType<typeof sql>): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*) as n from (${query}) q`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

const sendTo = (team: Team, domain: string, label: string) =>
  team.resend.emails.send({
    from: `Acme <hello@${domain}>`,
    to: `${label}-${stamp}@${world.rcptDomain}`,
    subject: `Retention ${label}`,
    text: 'x'.repeat(2000),
  });

const mx = () =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port: system.smtp.mx,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    name: 'mta.sender.test',
  });
const receive = async (subject: string) => {
  const info = await mx().sendMail({
    envelope: { from: 'alice@sender.test', to: [`support@${inboundDomain}`] },
    from: 'alice@sender.test',
    to: `support@${inboundDomain}`,
    subject,
    text: 'Hello',
    attachments: [{ filename: 'note.txt', content: 'attached' }],
  });
  return /queued as (\S+)/.exec(info.response)?.[1] ?? '';
};

/** A DMARC aggregate report about `domain` (RFC 7489), one record of three messages, mailed to its report address. */
async function sendDmarcReport(team: Team, domain: { id: string; name: string }, reportId: string): Promise<void> {
  const address = String((await api(team, `/domains/${domain.id}/dmarc-reports`)).body.report_address);
  const begin = Math.floor(Date.now() / 1000) - 86_400;
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<feedback>
  <report_metadata><org_name>Reporter</org_name><email>dmarc@reporter.test</email><report_id>${reportId}</report_id>
    <date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata>
  <policy_published><domain>${domain.name}</domain><p>none</p></policy_published>
  <record><row><source_ip>192.0.2.10</source_ip><count>3</count>
      <policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
    <identifiers><header_from>${domain.name}</header_from></identifiers>
    <auth_results><dkim><domain>${domain.name}</domain><result>pass</result></dkim>
      <spf><domain>${domain.name}</domain><result>pass</result></spf></auth_results></record>
</feedback>`;
  const info = await mx().sendMail({
    envelope: { from: 'dmarc@reporter.test', to: [address] },
    from: 'dmarc@reporter.test',
    to: address,
    subject: `Report Domain: ${domain.name}`,
    text: 'An aggregate report.',
    attachments: [{ filename: `${reportId}.xml`, content: xml, contentType: 'text/xml' }],
  });
  expect(info.response).toMatch(/^250 /);
}

const metricsOf = async (team: Team) =>
  (await api(team, `/emails/metrics?${new URLSearchParams({ start_date: day(-1), end_date: day(1) }).toString()}`)).body
    .totals as Record<string, number>;
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  ({ system } = world);
  const url = String(system.env.DATABASE_URL);
  dbs.gateway = createDb<unknown>({ url, schema: 'gateway', max: 2 }).db;
  dbs.sender = createDb<unknown>({ url, schema: 'sender', max: 2 }).db;
  dbs.inbound = createDb<unknown>({ url, schema: 'inbound_smtp', max: 2 }).db;
  dbs.dispatcher = createDb<unknown>({ url, schema: 'webhook_dispatcher', max: 2 }).db;
  receiver = await startWebhookReceiver();
  const events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  try {
    for (const name of ['byDefault', 'longer'] as const) {
      const created = await system.admin('team', 'create', '--name', `Retention ${name}`);
      const team: Team = {
        id: String(created.team_id),
        key: String(created.api_key),
        resend: testResend(String(created.api_key), system.apiUrl),
        emails: { old: '', recent: '' },
      };
      teams[name] = team;
      dataOf(await team.resend.webhooks.create({ endpoint: receiver.url, events: ['email.sent', 'email.delivered'] }));
    }
    // The longer team keeps 120 days (past the 90 every team keeps DMARC reports); the other the default 30.
    const set = await system.admin('team', 'set-retention', '--team', teams.longer.id, '--days', '120');
    expect(set).toEqual({ team_id: teams.longer.id, retention_days: 120 });
    inboundDomain = (
      await createReceivingDomain({
        resend: teams.byDefault.resend,
        dns: world.dns,
        events,
        name: `in-ret${stamp}.example.com`,
        mxPort: system.smtp.mx,
      })
    ).name;
    for (const name of ['byDefault', 'longer'] as const) {
      const { id, name: domainName } = await createVerifiedDomain({
        resend: teams[name].resend,
        dns: world.dns,
        events,
        name: `ret-${name.toLowerCase()}-${stamp}.example.com`,
      });
      domains[name] = { id, name: domainName };
    }
    for (const name of ['byDefault', 'longer'] as const) {
      teams[name].emails.old = dataOf(await sendTo(teams[name], domains[name]!.name, 'old')).id;
    }
    received.old = await receive('old');
    // Request logs are written a moment after their requests: the old sends' logs first, then the line.
    await waitFor(
      'the old sends logged',
      async () =>
        (await count(
          dbs.gateway,
          sql`select distinct team_id from request_logs where team_id = any(${[teams.byDefault.id, teams.longer.id]}::uuid[])
            and method = 'POST' and endpoint = '/emails'`,
        )) === 2,
    );
    betweenSends = new Date();
    for (const name of ['byDefault', 'longer'] as const) {
      teams[name].emails.recent = dataOf(await sendTo(teams[name], domains[name]!.name, 'recent')).id;
    }
    received.recent = await receive('recent');
  } finally {
    await events.close();
  }
  const all = Object.values(teams).flatMap((t) => Object.values(t.emails));
  await receiver.waitFor(
    'every email delivered and its webhook received',
    (deliveries) =>
      all.every((id) => deliveries.some((d) => d.json.type === 'email.delivered' && d.json.data.email_id === id)),
    60_000,
  );
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await Promise.all(Object.values(dbs).map((db) => db.destroy()));
});

describe('data retention', () => {
  it('pushes the retention the operator set to every owner', async () => {
    for (const db of [dbs.sender, dbs.inbound, dbs.dispatcher]) {
      await waitFor(
        'the owner to hold the longer retention',
        async () =>
          (await count(
            db,
            sql`select 1 from team_retention where team_id = ${teams.longer.id}::uuid and days = 120`,
          )) === 1,
      );
    }
  });

  it("deletes the rows past each team's retention with every row about them, and keeps their neighbours", async () => {
    const { byDefault, longer } = teams;
    // The metrics as counted before any row goes.
    const emailsBefore = ((await api(byDefault, '/emails')).body.data as unknown[]).length;
    await waitFor('the metrics to count every email', async () => {
      const totals = await metricsOf(byDefault);
      return totals.sent === emailsBefore && totals.delivered === emailsBefore;
    });
    const metricsBefore = await metricsOf(byDefault);
    const rawOld = await sql<{
      raw_id: string;
    }>`select raw_id from received_emails where id = ${received.old}::uuid`.execute(dbs.inbound);
    const rawOldId = String(rawOld.rows[0]?.raw_id);

    // 40 days ago: past the default 30, within the longer team's 120.
    const old = [byDefault.emails.old, longer.emails.old];
    await sql`update emails set created_at = now() - interval '40 days' where id = any(${old}::uuid[])`.execute(
      dbs.sender,
    );
    await sql`update received_emails set created_at = now() - interval '40 days' where id = ${received.old}::uuid`.execute(
      dbs.inbound,
    );
    await sql`update request_logs set created_at = now() - interval '40 days'
      where team_id = any(${[byDefault.id, longer.id]}::uuid[]) and created_at < ${betweenSends}`.execute(dbs.gateway);
    await sql`update webhook_events set created_at = now() - interval '40 days'
      where body::jsonb -> 'data' ->> 'email_id' = any(${old})`.execute(dbs.dispatcher);

    await waitFor(
      'the old email gone',
      async () => (await api(byDefault, `/emails/${byDefault.emails.old}`)).status === 404,
    );
    await waitFor(
      'the old received email gone',
      async () => (await api(byDefault, `/emails/receiving/${received.old}`)).status === 404,
    );
    await waitFor(
      'the old request logs gone',
      async () =>
        (await count(
          dbs.gateway,
          sql`select 1 from request_logs where team_id = ${byDefault.id}::uuid and created_at < ${betweenSends}`,
        )) === 0,
    );
    await waitFor(
      'the old webhook events gone',
      async () =>
        (await count(
          dbs.dispatcher,
          sql`select 1 from webhook_events where body::jsonb -> 'data' ->> 'email_id' = ${byDefault.emails.old}`,
        )) === 0,
    );

    // Every row about the old email went with it.
    for (const table of ['recipients', 'raw_emails', 'delivery_attempts', 'email_events']) {
      expect({
        table,
        n: await count(
          dbs.sender,
          sql`select 1 from ${sql.table(table)} where email_id = ${byDefault.emails.old}::uuid`,
        ),
      }).toEqual({
        table,
        n: 0,
      });
    }
    expect(
      await count(dbs.inbound, sql`select 1 from received_attachments where email_id = ${received.old}::uuid`),
    ).toBe(0);
    expect(await count(dbs.inbound, sql`select 1 from received_raw_messages where id = ${rawOldId}::uuid`)).toBe(0);
    expect(
      await count(
        dbs.dispatcher,
        sql`select 1 from webhook_attempts a join webhook_events e on e.id = a.event_id
        where e.body::jsonb -> 'data' ->> 'email_id' = ${byDefault.emails.old}`,
      ),
    ).toBe(0);

    // The neighbours: the recent ones, and the longer team's old ones.
    expect((await api(byDefault, `/emails/${byDefault.emails.recent}`)).status).toBe(200);
    expect((await api(byDefault, `/emails/${byDefault.emails.recent}/events`)).body.data).not.toEqual([]);
    expect((await api(byDefault, `/emails/receiving/${received.recent}`)).status).toBe(200);
    expect((await api(longer, `/emails/${longer.emails.old}`)).status).toBe(200);
    expect((await api(longer, `/emails/${longer.emails.old}/events`)).body.data).not.toEqual([]);
    expect(
      await count(
        dbs.gateway,
        sql`select 1 from request_logs where team_id = ${longer.id}::uuid and created_at < ${betweenSends}`,
      ),
    ).toBeGreaterThan(0);
    expect(
      await count(
        dbs.dispatcher,
        sql`select 1 from webhook_events where body::jsonb -> 'data' ->> 'email_id' = ${longer.emails.old}`,
      ),
    ).toBeGreaterThan(0);
    expect(
      await count(
        dbs.dispatcher,
        sql`select 1 from webhook_events where body::jsonb -> 'data' ->> 'email_id' = ${byDefault.emails.recent}`,
      ),
    ).toBeGreaterThan(0);

    // The metrics counted from the email it still shows though its rows are gone.
    expect(((await api(byDefault, '/emails')).body.data as unknown[]).length).toBe(emailsBefore - 1);
    expect(await metricsOf(byDefault)).toEqual(metricsBefore);
  });

  it('deletes DMARC reports past the longer of 90 days and their team’s retention, and notices past the team’s', async () => {
    const { byDefault, longer } = teams;
    const reportIds = {
      gone: `gone-${stamp}`,
      floor: `floor-${stamp}`,
      recent: `recent-${stamp}`,
      longer: `longer-${stamp}`,
    };
    await sendDmarcReport(byDefault, domains.byDefault!, reportIds.gone);
    await sendDmarcReport(byDefault, domains.byDefault!, reportIds.floor);
    await sendDmarcReport(byDefault, domains.byDefault!, reportIds.recent);
    await sendDmarcReport(longer, domains.longer!, reportIds.longer);
    // Notices emailed to admins (as the admin-notices consumer writes them), sent long ago or lately.
    const notices = { old: newId(), recent: newId(), longer: newId() };
    const notice = (id: string, team: Team, ageDays: number) => sql`insert into notice_emails
        (message_id, user_id, team_id, to_address, subject, text, sent_at, created_at)
      values (${id}::uuid, ${newId()}::uuid, ${team.id}::uuid, 'admin@example.com', 'Notice', 'Text',
        now() - make_interval(days => ${ageDays}), now() - make_interval(days => ${ageDays}))`;
    await notice(notices.old, byDefault, 40).execute(dbs.gateway);
    await notice(notices.recent, byDefault, 1).execute(dbs.gateway);
    await notice(notices.longer, longer, 40).execute(dbs.gateway);

    // The periods the reports cover, as if received then: 100 days ago (past 90 for the default team, within the
    // longer team's 120), and 40 days ago (past the default team's 30, within the 90 every team keeps).
    const backdate = (reportId: string, days: number) => sql`update dmarc_reports
      set begin_at = now() - make_interval(days => ${days + 1}), end_at = now() - make_interval(days => ${days})
      where report_id = ${reportId}`;
    await backdate(reportIds.gone, 100).execute(dbs.inbound);
    await backdate(reportIds.floor, 40).execute(dbs.inbound);
    await backdate(reportIds.longer, 100).execute(dbs.inbound);
    const goneId = String(
      (await sql<{ id: string }>`select id from dmarc_reports where report_id = ${reportIds.gone}`.execute(dbs.inbound))
        .rows[0]?.id,
    );

    await waitFor(
      'the old DMARC report gone',
      async () => (await count(dbs.inbound, sql`select 1 from dmarc_reports where id = ${goneId}::uuid`)) === 0,
    );
    await waitFor(
      'the old notice gone',
      async () =>
        (await count(dbs.gateway, sql`select 1 from notice_emails where message_id = ${notices.old}::uuid`)) === 0,
    );
    expect(await count(dbs.inbound, sql`select 1 from dmarc_report_records where report_id = ${goneId}::uuid`)).toBe(0);
    const kept = await sql<{ report_id: string; records: number }>`select r.report_id,
        (select count(*)::int from dmarc_report_records c where c.report_id = r.id) as records
      from dmarc_reports r where r.report_id = any(${Object.values(reportIds)}) order by r.report_id`.execute(
      dbs.inbound,
    );
    expect(kept.rows).toEqual(
      [reportIds.floor, reportIds.longer, reportIds.recent].sort().map((report_id) => ({ report_id, records: 1 })),
    );
    const keptNotices = await sql<{ message_id: string }>`select message_id from notice_emails
      where message_id = any(${Object.values(notices)}::uuid[])`.execute(dbs.gateway);
    expect(keptNotices.rows.map((r) => r.message_id).sort()).toEqual([notices.recent, notices.longer].sort());
    // The API's longest period still shows the report 40 days old.
    const shown = await api(
      byDefault,
      `/domains/${domains.byDefault!.id}/dmarc-reports?${new URLSearchParams({ from: day(-89), to: day(1) }).toString()}`,
    );
    expect((shown.body.reports as { report_id: string }[]).map((r) => r.report_id).sort()).toEqual(
      [reportIds.floor, reportIds.recent].sort(),
    );
  });

  it("keeps a broadcast's results and clicked links after its emails are gone", async () => {
    const { byDefault } = teams;
    const resend = byDefault.resend;
    const segment = dataOf(await resend.segments.create({ name: `Retention ${stamp}` })).id;
    for (const name of ['ada', 'bob']) {
      dataOf(
        await resend.contacts.create({ email: `${name}-${stamp}@${world.rcptDomain}`, segments: [{ id: segment }] }),
      );
    }
    const broadcast = dataOf(
      await resend.broadcasts.create({
        segmentId: segment,
        from: `Acme <news@${domains.byDefault!.name}>`,
        subject: 'News',
        html: '<p>News <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></p>',
        send: true,
      } as Parameters<Resend['broadcasts']['create']>[0]),
    ).id;
    const results = async () => (await api(byDefault, `/broadcasts/${broadcast}/results`)).body;
    await waitFor('both delivered', async () => (await results()).delivered === 2, 60_000);
    const before = await results();
    const linksBefore = (await api(byDefault, `/broadcasts/${broadcast}/clicked-links`)).body;
    expect(before).toMatchObject({ sent: 2, delivered: 2 });

    await sql`update emails set created_at = now() - interval '40 days' where broadcast_id = ${broadcast}::uuid`.execute(
      dbs.sender,
    );
    await waitFor(
      "the broadcast's emails gone",
      async () => (await count(dbs.sender, sql`select 1 from emails where broadcast_id = ${broadcast}::uuid`)) === 0,
    );
    expect(
      await count(dbs.sender, sql`select 1 from broadcast_recipients where broadcast_id = ${broadcast}::uuid`),
    ).toBe(0);
    expect(await results()).toEqual(before);
    expect((await api(byDefault, `/broadcasts/${broadcast}/clicked-links`)).body).toEqual(linksBefore);
  });

  it('reports the rows pruned and the oldest row kept on each service’s /metrics', async () => {
    const services = {
      sender: 'emails',
      'inbound-smtp': 'received_emails',
      'webhook-dispatcher': 'webhook_events',
    } as const;
    for (const [service, table] of Object.entries(services)) {
      const text = await (await fetch(`${system.services[service as keyof typeof services].url}/metrics`)).text();
      const pruned = new RegExp(`^retention_rows_pruned_total\\{table="${table}"[^}]*\\} (\\d+)`, 'm').exec(text);
      expect({ service, pruned: Number(pruned?.[1]) > 0 }).toEqual({ service, pruned: true });
      expect(text).toMatch(new RegExp(`^retention_oldest_row_age_seconds\\{table="${table}"`, 'm'));
    }
    const gateway = await (await fetch(`${system.services['api-gateway'].url}/metrics`)).text();
    expect(gateway).toMatch(/^retention_rows_pruned_total\{table="request_logs"[^}]*\} [1-9]/m);
    // The longer team's email, 40 days old, is the oldest kept.
    const sender = await (await fetch(`${system.services.sender.url}/metrics`)).text();
    const age = Number(/^retention_oldest_row_age_seconds\{table="emails"[^}]*\} (\S+)/m.exec(sender)?.[1]);
    expect(age).toBeGreaterThanOrEqual(39 * 86_400);
  });
});
