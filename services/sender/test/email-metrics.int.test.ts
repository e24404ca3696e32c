// An email's timeline (GET /emails/{id}/events), its delivery attempts with the SMTP conversation
// (GET /emails/{id}/attempts) and GET /emails/metrics, through the real gateway and sender: emails the
// file's MX takes (250), greylists once (451, then 250 on the retry) or refuses (550); and metrics against
// hand-counted fixtures in several time zones, weeks starting on Monday.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createDb } from '@postline/platform';
import { createVerifiedDomain, dataOf, testResend, useSystem, waitFor, type SharedSystem } from '@postline/testing';
import { SCHEMA as SENDER_SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';
import { foldMetricDeltas } from '../src/emails/db/email-metrics.ts';

jest.setTimeout(90_000);

// The shared system with the SMTP back-off shrunk, so that a greylisted recipient is retried at once.
const world = useSystem({ env: { POSTLINE_DELAY_SCALE: '0.00002' } });
let system: SharedSystem;
let apiKey: string;
let otherKey: string;
let db: Kysely<SenderDb>;
const stamp = Date.now().toString(36);
const ids = { ok: '', grey: '', hard: '' };
let domain: { id: string; name: string };

type Answer = { status: number; body: Record<string, unknown> };
async function get(path: string, key = apiKey): Promise<Answer> {
  const r = await fetch(`${system.apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}
/** Yesterday to tomorrow (UTC): the days this file's sends fall in, whenever it runs. */
const around = () => {
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  return { start_date: day(-1), end_date: day(1) };
};
const recipientsSettled = async (id: string) =>
  ((await get(`/emails/${id}/recipients`)).body.data as { status: string }[]).every(
    (r) => r.status !== 'pending' && r.status !== 'deferred',
  );

beforeAll(async () => {
  ({ system } = world);
  ({ db } = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SENDER_SCHEMA, max: 2 }));
  apiKey = String((await system.admin('team', 'create', '--name', 'Timelines')).api_key);
  otherKey = String((await system.admin('team', 'create', '--name', 'Not theirs')).api_key);
  const resend = testResend(apiKey, system.apiUrl);
  domain = await createVerifiedDomain({
    resend,
    dns: world.dns,
    env: system.env,
    name: `timeline-${stamp}.example.com`,
  });
  for (const local of ['ok', 'grey', 'hard'] as const) {
    ids[local] = dataOf(
      await resend.emails.send({
        from: `Acme <hello@${domain.name}>`,
        to: `${local}-${stamp}@${world.rcptDomain}`,
        subject: `Timeline ${local}`,
        text: 'Hello',
      }),
    ).id;
  }
  await waitFor(
    'every recipient settled',
    async () => {
      for (const id of Object.values(ids)) if (!(await recipientsSettled(id))) return false;
      return true;
    },
    30_000,
  );
});

afterAll(async () => {
  await db.destroy();
});

describe('GET /emails/{id}/events', () => {
  type Event = { id: string; type: string; created_at: string; data: Record<string, unknown> };
  const eventsOf = async (id: string) => (await get(`/emails/${id}/events`)).body.data as Event[];

  it('tells every event of an email, oldest first, with what each carries', async () => {
    await waitFor('the greylisted email delivered', async () =>
      (await eventsOf(ids.grey)).some((e) => e.type === 'email.delivered'),
    );
    expect((await eventsOf(ids.ok)).map((e) => e.type)).toEqual(['email.sent', 'email.delivered']);
    const grey = await eventsOf(ids.grey);
    expect(grey.map((e) => e.type)).toEqual(['email.sent', 'email.delivery_delayed', 'email.delivered']);
    expect(grey[1]!.data.to).toEqual([`grey-${stamp}@${world.rcptDomain}`]);
    expect(grey.map((e) => e.created_at)).toEqual([...grey.map((e) => e.created_at)].sort());
    const hard = await eventsOf(ids.hard);
    expect(hard.map((e) => e.type)).toEqual(['email.sent', 'email.bounced']);
    expect(hard[1]!.data.bounce).toMatchObject({ type: 'Permanent' });
    // Only what the event adds to the email: its subject and sender are the email's.
    expect(hard[1]!.data).not.toHaveProperty('subject');
  });

  it('lists the first 1,000 events of an email that has more, and says so', async () => {
    const email = await db
      .selectFrom('emails')
      .select(['id', 'team_id'])
      .where('id', '=', ids.hard)
      .executeTakeFirstOrThrow();
    expect((await get(`/emails/${email.id}/events`)).body).toMatchObject({ has_more: false });
    // 1,000 more kept events (of a type no metric counts), after the two the email has.
    const later = Date.now() + 60_000;
    await db
      .insertInto('email_events')
      .values(
        Array.from({ length: 1_000 }, (_, i) => ({
          id: randomUUID(),
          team_id: email.team_id,
          email_id: email.id,
          type: 'email.scheduled',
          occurred_at: new Date(later + i),
          data: JSON.stringify({}),
        })),
      )
      .execute();
    const { body } = await get(`/emails/${email.id}/events`);
    const events = body.data as Event[];
    expect(body.has_more).toBe(true);
    expect(events).toHaveLength(1_000);
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(['email.sent', 'email.bounced']);
  });

  it('answers 404 for another team’s email and for an id that is none', async () => {
    expect((await get(`/emails/${ids.ok}/events`, otherKey)).status).toBe(404);
    expect(await get('/emails/nope/events')).toMatchObject({ status: 404, body: { name: 'not_found' } });
  });
});

describe('GET /emails/{id}/attempts', () => {
  type Attempt = {
    attempt: number;
    recipients: string[];
    mx: string | null;
    ip: string | null;
    port: number | null;
    tls: { version: string; cipher: string } | null;
    transcript: string[];
    message_headers: string | null;
  };
  const attemptsOf = async (id: string) => (await get(`/emails/${id}/attempts`)).body.data as Attempt[];

  it('keeps each attempt with its MX, address, TLS and the server’s replies: 451, then 250 on the retry', async () => {
    const grey = await attemptsOf(ids.grey);
    expect(grey.map((a) => a.attempt)).toEqual([1, 2]);
    for (const a of grey) {
      expect(a).toMatchObject({
        mx: `mx1.${world.rcptDomain}`,
        ip: world.sink.host,
        recipients: [`grey-${stamp}@${world.rcptDomain}`],
        tls: { version: expect.stringMatching(/^TLSv1\.[23]$/) },
      });
      expect(a.transcript).toContain(`C: RCPT TO:<grey-${stamp}@${world.rcptDomain}>`);
    }
    expect(grey[0]!.transcript).toContain('S: 451 4.7.1 Greylisted, please try again later');
    expect(grey[0]!.transcript.join('\n')).not.toContain('the message');
    expect(grey[1]!.transcript).toEqual(expect.arrayContaining([expect.stringMatching(/^S: 250 2\.0\.0 Queued/)]));
    expect(grey[1]!.transcript.join('\n')).not.toMatch(/Hello|Subject:/);

    // The message as signed and sent: its header block, DKIM-Signature first; never its body.
    const headers = String(grey[1]!.message_headers);
    expect(headers).toMatch(
      new RegExp(`^DKIM-Signature: v=1; a=rsa-sha256;[^]*d=${domain.name.replace(/\./g, '\\.')};`),
    );
    expect(headers).toContain('Subject: Timeline grey');
    expect(headers).not.toContain('\r\n\r\n');

    expect((await get(`/emails/${ids.hard}/attempts`)).body).toMatchObject({ has_more: false });
    const [hard] = await attemptsOf(ids.hard);
    expect(hard!.transcript).toContain('S: 550 5.1.1 No such user here');
  });

  it('answers 404 for another team’s email', async () => {
    expect((await get(`/emails/${ids.grey}/attempts`, otherKey)).status).toBe(404);
    expect((await get('/emails/nope/attempts')).status).toBe(404);
  });
});

describe('GET /emails/metrics', () => {
  type Metrics = {
    totals: Record<string, number>;
    data: Record<string, string | number>[];
  };
  const metrics = async (query: Record<string, string>, key = apiKey) => {
    const r = await get(`/emails/metrics?${new URLSearchParams(query).toString()}`, key);
    expect(r.status).toBe(200);
    return r.body as unknown as Metrics & Record<string, unknown>;
  };

  it('counts what was sent as the events happened: sent, delivered, delayed and bounced, by provider', async () => {
    const m = await metrics({ ...around(), domain_id: domain.id, dimensions: 'provider' });
    // The team's domain is named on a row split by domain.
    expect((await metrics({ ...around(), dimensions: 'domain', metrics: 'sent' })).data).toEqual([
      { domain_id: domain.id, domain_name: domain.name, sent: 4 },
    ]);
    // The three, and the probe createVerifiedDomain sent to a sandbox address (delivered without an MX).
    expect(m.totals).toMatchObject({
      sent: 4,
      delivered: 3,
      delivery_delayed: 1,
      bounced: 1,
      bounced_permanent: 1,
      complained: 0,
      bounce_rate: 0.25,
      delivery_rate: 0.75,
    });
    // The sink's MX is nobody's mailbox provider; `sent` and the sandbox's delivery have none ('').
    expect(m.data).toEqual([
      expect.objectContaining({ provider: '', sent: 4, delivered: 1 }),
      expect.objectContaining({ provider: 'other', sent: 0, delivered: 2, bounced: 1, delivery_delayed: 1 }),
    ]);
    expect((await metrics(around(), otherKey)).totals).toMatchObject({ sent: 0 });
  });

  describe('against hand-counted counts', () => {
    let teamId: string;
    const d1 = randomUUID();
    const d2 = randomUUID();
    const b1 = randomUUID();

    beforeAll(async () => {
      const team = await system.admin('team', 'create', '--name', 'Counted by hand');
      teamId = String(team.team_id);
      apiKeyOf.key = String(team.api_key);
      const row = (
        hour: string,
        domainId: string,
        metric: string,
        n: number,
        broadcastId = '00000000-0000-0000-0000-000000000000',
      ) => ({
        team_id: teamId,
        hour: new Date(hour),
        domain_id: domainId,
        broadcast_id: broadcastId,
        provider: metric === 'delivered' ? 'gmail' : '',
        metric,
        n,
      });
      await db
        .insertInto('email_metrics')
        .values([
          row('2026-03-01T22:00:00Z', d1, 'sent', 5), // Sunday; New York 17:00 the 1st; Tokyo 07:00 the 2nd
          row('2026-03-02T03:00:00Z', d1, 'sent', 7), // New York 22:00 the 1st; Tokyo 12:00 the 2nd
          row('2026-03-02T03:00:00Z', d1, 'delivered', 6),
          row('2026-03-02T03:00:00Z', d1, 'bounced_permanent', 1),
          row('2026-03-08T12:00:00Z', d2, 'sent', 11, b1), // Sunday
          row('2026-03-08T12:00:00Z', d2, 'delivered', 11, b1),
          row('2026-03-08T12:00:00Z', d2, 'complained', 1, b1),
          row('2026-03-09T01:00:00Z', d2, 'opened_by_people', 3, b1), // Monday; New York (EDT) 21:00 the 8th
          row('2026-03-09T01:00:00Z', d2, 'opened_by_machines', 2, b1),
        ])
        .execute();
      // Not folded yet: counted all the same.
      await db
        .insertInto('email_metric_deltas')
        .values(row('2026-03-02T03:00:00Z', d1, 'sent', 1))
        .execute();
    });
    const apiKeyOf = { key: '' };
    const counted = (query: Record<string, string>) =>
      metrics({ start_date: '2026-03-01', end_date: '2026-03-09', dimensions: 'period', ...query }, apiKeyOf.key);
    const column = (m: Metrics, name: string): Record<string, string | number | undefined> =>
      Object.fromEntries(m.data.map((r) => [String(r.period), r[name]]));

    it('splits days in UTC, with a row for every day of the range', async () => {
      const m = await counted({ metrics: 'sent,delivered,bounced,opened,opened_by_people' });
      expect(m).toMatchObject({
        object: 'metrics',
        start_date: '2026-03-01',
        end_date: '2026-03-09',
        granularity: 'daily',
        dimensions: ['period'],
      });
      expect(m.data).toHaveLength(9);
      expect(column(m, 'sent')).toEqual({
        '2026-03-01': 5,
        '2026-03-02': 8,
        '2026-03-03': 0,
        '2026-03-04': 0,
        '2026-03-05': 0,
        '2026-03-06': 0,
        '2026-03-07': 0,
        '2026-03-08': 11,
        '2026-03-09': 0,
      });
      expect(m.data.find((r) => r.period === '2026-03-09')).toMatchObject({ opened: 5, opened_by_people: 3 });
      expect(m.totals).toEqual({ sent: 24, delivered: 17, bounced: 1, opened: 5, opened_by_people: 3 });
    });

    it('counts days in the asked time zone, across a daylight saving change', async () => {
      const ny = await counted({ timezone: 'America/New_York', metrics: 'sent,opened' });
      expect(column(ny, 'sent')).toMatchObject({ '2026-03-01': 13, '2026-03-02': 0, '2026-03-08': 11 });
      expect(column(ny, 'opened')).toMatchObject({ '2026-03-08': 5, '2026-03-09': 0 });
      const tokyo = await counted({ timezone: 'Asia/Tokyo', metrics: 'sent,opened' });
      expect(column(tokyo, 'sent')).toMatchObject({ '2026-03-01': 0, '2026-03-02': 13, '2026-03-08': 11 });
      expect(column(tokyo, 'opened')).toMatchObject({ '2026-03-09': 5 });
    });

    it('starts weeks on Monday and months on the first, and splits hours in the zone', async () => {
      const weeks = await counted({ granularity: 'weekly', metrics: 'sent,delivered,opened' });
      expect(weeks.data).toEqual([
        { period: '2026-02-23', sent: 5, delivered: 0, opened: 0 },
        { period: '2026-03-02', sent: 19, delivered: 17, opened: 0 },
        { period: '2026-03-09', sent: 0, delivered: 0, opened: 5 },
      ]);
      const months = await counted({ granularity: 'monthly', metrics: 'sent' });
      expect(months.data).toEqual([{ period: '2026-03-01', sent: 24 }]);
      const hours = await metrics(
        {
          start_date: '2026-03-02',
          end_date: '2026-03-02',
          granularity: 'hourly',
          timezone: 'Asia/Tokyo',
          metrics: 'sent',
          dimensions: 'period',
        },
        apiKeyOf.key,
      );
      expect(hours.data).toHaveLength(24);
      expect(hours.data.filter((r) => r.sent !== 0)).toEqual([
        { period: '2026-03-02T07:00', sent: 5 },
        { period: '2026-03-02T12:00', sent: 8 },
      ]);
    });

    it('splits by domain, broadcast and provider, filters by domain, and gives the rates', async () => {
      const byDomain = await counted({ dimensions: 'domain', metrics: 'sent,opened' });
      // The fixtures' domains are no domains of the team's: their name is unknown.
      expect(byDomain.data).toEqual(
        [
          { domain_id: d1, domain_name: '', sent: 13, opened: 0 },
          { domain_id: d2, domain_name: '', sent: 11, opened: 5 },
        ].sort((a, b) => (a.domain_id < b.domain_id ? -1 : 1)),
      );
      const byBroadcast = await counted({ dimensions: 'broadcast', metrics: 'sent' });
      expect(byBroadcast.data).toEqual([
        { broadcast_id: '', sent: 13 },
        { broadcast_id: b1, broadcast_name: '', sent: 11 },
      ]);
      const byProvider = await counted({ dimensions: 'provider', metrics: 'delivered' });
      expect(byProvider.data).toEqual([
        { provider: '', delivered: 0 },
        { provider: 'gmail', delivered: 17 },
      ]);
      expect((await counted({ domain_id: d2, metrics: 'sent' })).totals).toEqual({ sent: 11 });
      // Without dimensions, only the totals; instants instead of days bound the range to the hour.
      const window = await metrics(
        { start_date: '2026-03-02T00:00:00Z', end_date: '2026-03-08T12:30:00Z', metrics: 'sent' },
        apiKeyOf.key,
      );
      expect(window).toMatchObject({ dimensions: [], data: [], totals: { sent: 19 } });
      const rates = await counted({ metrics: 'bounce_rate,complaint_rate,open_rate,delivery_rate' });
      expect(rates.totals).toEqual({
        bounce_rate: 0.0417, // 1 / 24
        complaint_rate: 0.0588, // 1 / 17
        open_rate: 0.1765, // 3 people / 17
        delivery_rate: 0.7083, // 17 / 24
      });
    });

    it('reads the same once the deltas are folded into their counters', async () => {
      const before = await counted({ metrics: 'sent' });
      while ((await foldMetricDeltas(db, 1000)) > 0);
      const left = await sql<{
        n: number;
      }>`select count(*)::int as n from email_metric_deltas where team_id = ${teamId}`.execute(db);
      expect(left.rows[0]!.n).toBe(0);
      expect(await counted({ metrics: 'sent' })).toEqual(before);
    });
  });

  it('refuses a bad time zone, metric, dimension or range with a validation error', async () => {
    for (const [query, field] of [
      ['timezone=Mars/Base', 'timezone'],
      ['metrics=sent,nope', 'metric'],
      ['dimensions=planet', 'dimension'],
      ['start_date=2026-03-09&end_date=2026-03-01', 'start_date'],
      ['start_date=03/01/2026', 'start_date'],
      ['dimensions=email', 'email_id'],
      ['granularity=hourly&start_date=2026-01-01&end_date=2026-03-01', 'hourly'],
      [`dimensions=broadcast&email_id=${randomUUID()}`, 'cannot be combined'],
    ] as const) {
      const r = await get(`/emails/metrics?${query}`);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ name: 'validation_error' });
      expect(String(r.body.message)).toContain(field);
    }
  });

  it('splits by email for the emails asked', async () => {
    const m = await metrics({
      ...around(),
      dimensions: 'email',
      email_id: `${ids.ok},${ids.hard}`,
      metrics: 'sent,delivered,bounced',
    });
    expect(m.data).toEqual(
      [
        { email_id: ids.ok, sent: 1, delivered: 1, bounced: 0 },
        { email_id: ids.hard, sent: 1, delivered: 0, bounced: 1 },
      ].sort((a, b) => (a.email_id < b.email_id ? -1 : 1)),
    );
  });
});
