// The reputation guard end to end, on a system of this file's own (its window and minimum are set small,
// which a shared system must not have): a team whose sends bounce past the line is paused (new sends answer
// 403 sending_paused, its queued email waits pending, `internal.reputation.paused` is emitted), another
// team's domain goes on sending, a member cannot resume, an admin's key resumes, and the email that waited
// is delivered. A team whose lines the operator set with the admin CLI is judged by them. The official
// resend SDK through the real gateway; the recipients' MX is a local smtp-server.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import type { Resend } from 'resend';
import { createDb, TEAM_HEADER, USER_HEADER, USER_ROLE_HEADER, newId } from '@postline/platform';
import {
  createVerifiedDomain,
  dataOf,
  makeTimerDue,
  observeBroker,
  startDeliveringSystem,
  testResend,
  waitFor,
  type BrokerObserver,
  type DnsServer,
  type SinkMx,
  type System,
} from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';

jest.setTimeout(120_000);

const RCPT = 'reputation.test';

let system: System;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let db: Kysely<SenderDb>;
type Team = { id: string; key: string; resend: Resend; domain: string };
let paused: Team;
let other: Team;
let lenient: Team;

async function team(name: string, domain: string): Promise<Team> {
  const created = await system.admin('team', 'create', '--name', name);
  const key = String(created.api_key);
  const resend = testResend(key, system.apiUrl);
  const verified = await createVerifiedDomain({ resend, dns, events, name: domain });
  return { id: String(created.team_id), key, resend, domain: verified.name };
}

async function call(t: Team, method: string, path: string, body?: unknown) {
  const res = await fetch(`${system.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.key}`, 'user-agent': 'test', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function send(t: Team, to: string) {
  return call(t, 'POST', '/emails', { from: `Shop <news@${t.domain}>`, to, subject: 'Hello', text: 'Hi' });
}

async function lastEvent(t: Team, id: string): Promise<string | undefined> {
  return dataOf(await t.resend.emails.get(id)).last_event;
}

async function recipientStatus(emailId: string): Promise<string | undefined> {
  const row = await db.selectFrom('recipients').select('status').where('email_id', '=', emailId).executeTakeFirst();
  return row?.status;
}

beforeAll(async () => {
  // Ten sends make a window the guard judges; a retry waits minutes (scale 1), so the test fires it itself.
  ({ dns, sink, system } = await startDeliveringSystem(RCPT, {
    RATE_LIMIT_PER_SECOND: '1000',
    REPUTATION_WINDOW: '20',
    REPUTATION_MIN_SENDS: '10',
  }));
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [
      { exchange: 'events', pattern: 'internal.domain.state' },
      { exchange: 'events', pattern: 'internal.reputation.*' },
    ],
  });
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SCHEMA }).db;
  paused = await team('Bouncy', 'bouncy.example.com');
  other = await team('Careful', 'careful.example.com');
  lenient = await team('Lenient', 'lenient.example.com');
}, 120_000);

afterAll(async () => {
  await db?.destroy();
  await events?.close();
  await system?.stop();
  await sink?.close();
  await dns?.close();
}, 30_000);

describe('the reputation guard', () => {
  it('pauses a team whose bounce rate crosses the line, keeps its queued email pending, and resumes for an admin', async () => {
    // An email that will be waiting: its recipient's server greylists the first attempt, so it is deferred.
    const queued = String((await send(paused, `grey-wait@${RCPT}`)).body.id);
    await waitFor(
      'the first attempt deferred',
      async () => (await lastEvent(paused, queued)) === 'delivery_delayed',
      30_000,
    );

    // Ten sends that all bounce: 100% over ten sends, above the 4% line at the minimum volume.
    const bounced = await Promise.all(Array.from({ length: 10 }, (_, i) => send(paused, `hard${i}@${RCPT}`)));
    expect(bounced.map((r) => r.status)).toEqual(Array(10).fill(200));
    const pausedEvent = await events.waitFor(
      'the team paused',
      (m) => m.routingKey === 'internal.reputation.paused' && m.envelope.team_id === paused.id,
      { timeoutMs: 60_000 },
    );
    expect(pausedEvent.envelope.data).toMatchObject({
      scope: 'team',
      domain_id: null,
      reason: 'bounce_rate',
      sends: 10,
      bounce_rate: 1,
      thresholds: { bounce_rate: 0.04, complaint_rate: 0.0008, window: 20, min_sends: 10 },
    });

    // New sends are refused with the named error, saying why and how to resume.
    const refused = await send(paused, `someone@${RCPT}`);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ statusCode: 403, name: 'sending_paused' });
    expect(String(refused.body.message)).toContain('bounce rate of 100% over its last 10 sends, above the 4% line');
    expect(String(refused.body.message)).toContain('POST /reputation/resume');
    const batch = await call(paused, 'POST', '/emails/batch', [
      { from: `news@${paused.domain}`, to: `a@${RCPT}`, subject: 'Hi', text: 'Hi' },
    ]);
    expect(batch.body).toMatchObject({ name: 'sending_paused' });

    const reputation = await call(paused, 'GET', '/reputation');
    expect(reputation.status).toBe(200);
    expect(reputation.body).toMatchObject({
      object: 'reputation',
      team: { sends: 10, bounces: 10, bounce_rate: 1, paused: { reason: 'bounce_rate', sends: 10, bounce_rate: 1 } },
      domains: [{ name: paused.domain, sends: 10, bounces: 10, paused: null }],
    });

    // Another team's domain is not affected.
    const fine = await send(other, `fine@${RCPT}`);
    expect(fine.status).toBe(200);
    await waitFor(
      'the other team delivered',
      async () => (await lastEvent(other, String(fine.body.id))) === 'delivered',
      30_000,
    );
    expect((await call(other, 'GET', '/reputation')).body).toMatchObject({ team: { paused: null } });

    // The queued email's retry comes while paused: it is parked, its recipient still deferred (not failed).
    await waitFor(
      'the retry parked',
      async () => {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from parked_deliveries
          where team_id = ${paused.id} and command->>'email_id' = ${queued}`.execute(db);
        if ((rows[0]?.n ?? 0) > 0) return true;
        await makeTimerDue(db, `email-deliver:${queued}:${RCPT}:0`);
        return false;
      },
      30_000,
    );
    expect(await recipientStatus(queued)).toBe('deferred');
    expect(sink.messages.some((m) => m.to.includes(`grey-wait@${RCPT}`))).toBe(false);

    // A member of the team cannot resume (the gateway forwards a dashboard user's role).
    const asMember = await fetch(`${system.services.sender.url}/reputation/resume`, {
      method: 'POST',
      headers: {
        [TEAM_HEADER]: paused.id,
        [USER_HEADER]: newId(),
        [USER_ROLE_HEADER]: 'member',
        'content-type': 'application/json',
      },
      body: '{}',
    });
    expect(asMember.status).toBe(403);
    expect(await asMember.json()).toMatchObject({ name: 'invalid_permission' });

    // A full-access key resumes: the pause is lifted and the email that waited is delivered.
    const resumed = await call(paused, 'POST', '/reputation/resume', {});
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ team: { paused: null, sends: 0 } });
    await events.waitFor(
      'the team resumed',
      (m) => m.routingKey === 'internal.reputation.resumed' && m.envelope.team_id === paused.id,
      { timeoutMs: 30_000 },
    );
    await waitFor('the queued email delivered', async () => (await lastEvent(paused, queued)) === 'delivered', 30_000);

    // The window starts afresh: the old bounces do not pause the team again, and it sends.
    const after = await send(paused, `back@${RCPT}`);
    expect(after.status).toBe(200);
    await waitFor(
      'a new send delivered',
      async () => (await lastEvent(paused, String(after.body.id))) === 'delivered',
      30_000,
    );
  });

  it('judges a team by the lines the operator set with the admin CLI, shows them, and clears them', async () => {
    const set = await system.admin('team', 'set-reputation', '--team', lenient.id, '--bounce-rate', '0.5');
    expect(set).toEqual({
      team_id: lenient.id,
      reputation_thresholds: { bounce_rate: 0.5, complaint_rate: null, window: null, min_sends: null },
    });
    // The gateway pushes the lines to the sender within seconds; GET /reputation shows those in force.
    const lines = async () =>
      (await call(lenient, 'GET', '/reputation')).body.thresholds as Record<string, unknown> | undefined;
    await waitFor('the lines in force', async () => (await lines())?.bounce_rate === 0.5, 30_000);
    expect(await lines()).toEqual({
      bounce_rate: 0.5,
      complaint_rate: 0.0008,
      window: 20,
      min_sends: 10,
      set_for_team: ['bounce_rate'],
    });

    // Three bounces in ten sends: 30%, over the install's 4% line but not over the team's 50%.
    const first = await Promise.all([
      ...Array.from({ length: 3 }, (_, i) => send(lenient, `hard-lenient${i}@${RCPT}`)),
      ...Array.from({ length: 7 }, (_, i) => send(lenient, `fine-lenient${i}@${RCPT}`)),
    ]);
    expect(first.map((r) => r.status)).toEqual(Array(10).fill(200));
    const window = async () => (await call(lenient, 'GET', '/reputation')).body.team as Record<string, unknown>;
    await waitFor('the ten sends counted', async () => (await window()).sends === 10, 60_000);
    expect(await window()).toMatchObject({ sends: 10, bounces: 3, paused: null });

    // Five more bounces: eight in fifteen sends, 53%, over the team's line.
    for (let i = 3; i < 8; i++) expect((await send(lenient, `hard-lenient${i}@${RCPT}`)).status).toBe(200);
    const pausedEvent = await events.waitFor(
      'the lenient team paused',
      (m) => m.routingKey === 'internal.reputation.paused' && m.envelope.team_id === lenient.id,
      { timeoutMs: 60_000 },
    );
    expect(pausedEvent.envelope.data).toMatchObject({
      reason: 'bounce_rate',
      thresholds: { bounce_rate: 0.5, complaint_rate: 0.0008, window: 20, min_sends: 10 },
    });
    const refused = await send(lenient, `someone@${RCPT}`);
    expect(refused.status).toBe(403);
    expect(String(refused.body.message)).toContain('above the 50% line');

    // Cleared: the install's lines again.
    const cleared = await system.admin('team', 'clear-reputation', '--team', lenient.id);
    expect(cleared).toMatchObject({ reputation_thresholds: { bounce_rate: null } });
    await waitFor('the install’s lines in force', async () => (await lines())?.bounce_rate === 0.04, 30_000);
    expect(await lines()).toMatchObject({ set_for_team: [] });
  });
});
