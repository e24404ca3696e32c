// Reading and recording delivery attempts many at a time (a worker's batch), on a real Postgres: one
// statement reads every attempt, one records every recipient; the effect must be that of one attempt after
// another, including duplicates of one command in the same batch.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createDb, createSecretBox, newId } from '@postline/platform';
import { createTestDatabase, sequentialScans, waitFor, type TestDatabase } from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { pruneAcceptedRequests } from '../src/emails/db/accepted-requests.ts';
import {
  createAttemptLoader,
  loadAttempts,
  type AttemptQuery,
  type LoadedAttempt,
} from '../src/delivery/db/attempts.ts';
import { migrate } from '../src/db/migrate.ts';
import { waitingRecipients } from '../src/delivery/db/recipients.ts';
import type { SenderDb, SendingDomainRow, SuppressionRow } from '../src/db/schema.ts';
import { findSendingDomains } from '../src/sending-domains/db/sending-domains.ts';
import type { DomainState, SuppressionOrigin } from '@postline/contracts';
import { parseEmailRequest, type EmailRequest, type ParseEmailOptions } from '../src/message/domain/email-request.ts';
import type { RecipientResult } from '../src/delivery/domain/recipient-result.ts';
import { createInProcessComposer } from '../src/delivery/mime/composer-pool.ts';
import { createDkimSigner } from '../src/delivery/mime/dkim.ts';
import type { Mta } from '../src/delivery/smtp/types.ts';
import { acceptEmails } from '../src/emails/use-cases/accept-emails.ts';
import { applyDomainState } from '../src/sending-domains/use-cases/apply-domain-state.ts';
import { createDeliveryClaims, type DeliveryClaims } from '../src/delivery/jobs/delivery-claims.ts';
import {
  attemptDelivery,
  recordAttempts,
  type DeliverDeps,
  type DeliveryAttempt,
} from '../src/delivery/use-cases/deliver-emails.ts';
import { noClaims, unbounded } from './support/deliver-deps.ts';
import { addSuppressions, expireSuppression, expiryTimerKey } from '../src/suppressions/use-cases/suppressions.ts';

let database: TestDatabase;
let db: Kysely<SenderDb>;
const teamId = newId();
const otherTeam = newId();
let domain: SendingDomainRow;
const now = new Date();

const composer = createInProcessComposer();
const deps = (): DeliverDeps => {
  const box = createSecretBox('0'.repeat(64));
  return {
    db,
    mta: {} as Mta,
    composer,
    openDkimKey: (sealed) => box.open(sealed),
    verpKey: 'k',
    delayScale: 1,
    now: () => new Date(),
    logger: undefined as never,
    budget: unbounded(),
    claims: noClaims(),
    signRaw: createDkimSigner(),
  };
};

/** The request of a body the parser accepts. */
function parsed(body: unknown, options: ParseEmailOptions): EmailRequest {
  const result = parseEmailRequest(body, options);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal)}`);
  return result.request;
}

beforeAll(async () => {
  database = await createTestDatabase('attempts');
  // Migrated on a pool closed at once: its index builds count as sequential scans, which a backend reports
  // only once idle for a second or as it exits (the scan-counting test below must not see them late).
  const setup = createDb<SenderDb>({ url: database.url, schema: SCHEMA }).db;
  await migrate(setup);
  await setup.destroy();
  db = createDb<SenderDb>({ url: database.url, schema: SCHEMA }).db;
  domain = {
    domain_id: newId(),
    team_id: teamId,
    name: 'acme.test',
    status: 'verified',
    sending_verified: true,
    dkim_selector: 'postline',
    dkim_private_key_encrypted: 'sealed',
    return_path: 'send.acme.test',
    tls: 'opportunistic',
    state_at: now,
    deleted: false,
    open_tracking: false,
    click_tracking: false,
    tracking_subdomain: null,
    tracking_verified: false,
  };
  await db.insertInto('sending_domains').values(domain).execute();
});

afterAll(async () => {
  await db.destroy();
  await database.drop();
});

/** Accepts an email to `to` and returns its id. */
async function accept(to: string[]): Promise<string> {
  const request = parsed({ from: 'Acme <hi@acme.test>', to, subject: 'Hello', text: 'Hi' }, { now, batch: false });
  const [id] = await acceptEmails(db, { idempotency: undefined, emails: [{ request, domain }], now }, (ids) => ids);
  return id as string;
}

const query = (emailId: string, positions: number[], attempt = 1, team = teamId): AttemptQuery => ({
  teamId: team,
  emailId,
  positions,
  attempt,
  now,
});

function attempted(
  loaded: LoadedAttempt | undefined,
  domainName: string,
  results: RecipientResult[],
  at: { attempt: number; throttled: number } = { attempt: 1, throttled: 0 },
): DeliveryAttempt {
  if (!loaded) throw new Error('nothing loaded');
  return {
    kind: 'attempted',
    email: loaded.email,
    recipients: loaded.recipients,
    results,
    ...at,
    domain: domainName,
    traces: [],
    messageHeaders: null,
  };
}

const delivered: RecipientResult = { kind: 'delivered', code: 250, response: '2.0.0 OK' };

async function outboxOf(emailId: string): Promise<string[]> {
  const { rows } = await sql<{ routing_key: string }>`select routing_key from outbox
    where envelope->'data'->>'email_id' = ${emailId} or envelope->'data'->'message'->'data'->>'email_id' = ${emailId} order by id`.execute(
    db,
  );
  return rows.map((r) => r.routing_key);
}

describe('loadAttempts', () => {
  it('reads many attempts in one call, in the order asked, and nothing for unknown ids, other teams or recipients at another attempt', async () => {
    const a = await accept(['one@postline.test', 'x@rcpt.test', 'y@rcpt.test']);
    const b = await accept(['two@postline.test']);
    const loaded = await loadAttempts(db, [
      query(a, [1, 2]),
      query(newId(), [0]),
      query(b, [0]),
      query(a, [0], 1, otherTeam),
      query(a, [0], 2),
      query(a, [0]),
    ]);
    expect(loaded.map((l) => l?.recipients.map((r) => r.address))).toEqual([
      ['x@rcpt.test', 'y@rcpt.test'],
      undefined,
      ['two@postline.test'],
      undefined,
      undefined,
      ['one@postline.test'],
    ]);
    expect(loaded[0]?.email).toMatchObject({ id: a, team_id: teamId, subject: 'Hello' });
    expect(loaded[0]?.email.created_at).toBeInstanceOf(Date);
    expect(loaded[0]?.sending).toMatchObject({ domain_id: domain.domain_id, sending_verified: true });
    expect(loaded[0]?.sending?.state_at).toBeInstanceOf(Date);
    expect(loaded[0]?.hasAttachments).toBe(false);
    expect(loaded[0]?.attachmentBytes).toBe(0);
  });

  it('reports the decoded size of the attachments, which the memory budget reserves for', async () => {
    const request = parsed(
      {
        from: 'Acme <hi@acme.test>',
        to: ['x@rcpt.test'],
        subject: 'Files',
        text: 'Hi',
        attachments: [
          { filename: 'a.bin', content: Buffer.alloc(3000, 1).toString('base64') },
          { filename: 'b.bin', content: Buffer.alloc(500, 2).toString('base64') },
        ],
      },
      { now, batch: false },
    );
    const [id] = await acceptEmails(db, { idempotency: undefined, emails: [{ request, domain }], now }, (ids) => ids);
    const [loaded] = await loadAttempts(db, [query(id as string, [0])]);
    expect(loaded).toMatchObject({ hasAttachments: true, attachmentBytes: 3500 });
  });

  it('reports the active suppressions among the recipients', async () => {
    const id = await accept(['Gone@rcpt.test', 'fine@rcpt.test']);
    await db
      .insertInto('suppressions')
      .values([
        {
          id: newId(),
          team_id: teamId,
          email: 'gone@rcpt.test',
          origin: 'complaint',
          source_id: null,
          expires_at: null,
          created_at: now,
        },
        {
          id: newId(),
          team_id: otherTeam,
          email: 'fine@rcpt.test',
          origin: 'bounce',
          source_id: null,
          expires_at: null,
          created_at: now,
        },
      ])
      .execute();
    const [loaded] = await loadAttempts(db, [query(id, [0, 1])]);
    expect([...(loaded?.suppressed ?? [])]).toEqual([['gone@rcpt.test', 'complaint']]);
  });

  it('joins concurrent reads through the loader and answers each caller with its own attempt', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => accept([`n${i}@postline.test`])));
    const load = createAttemptLoader(db, { maxItems: 8 });
    const loaded = await Promise.all(ids.map((id) => load(query(id, [0]))));
    expect(loaded.map((l) => l?.email.id)).toEqual(ids);
    expect(loaded.map((l) => l?.recipients[0]?.address)).toEqual(ids.map((_, i) => `n${i}@postline.test`));
  });
});

describe('recordAttempts', () => {
  it('records a batch with a duplicate command once, as one attempt after another would', async () => {
    const id = await accept(['a@postline.test', 'b@rcpt.test']);
    const [sandbox, remote] = await loadAttempts(db, [query(id, [0]), query(id, [1])]);
    const first = attempted(sandbox, 'postline.test', [delivered]);
    const copy = attempted(sandbox, 'postline.test', [
      {
        kind: 'bounced',
        code: 550,
        response: '5.1.1 no',
        bounce: { type: 'Permanent', subType: 'General', suppress: true },
      },
    ]);
    const other = attempted(remote, 'rcpt.test', [delivered]);

    await db.transaction().execute((trx) => recordAttempts(deps(), trx, [first, copy, other]));

    const recipients = await db
      .selectFrom('recipients')
      .select(['position', 'status', 'attempts', 'last_code'])
      .where('email_id', '=', id)
      .orderBy('position')
      .execute();
    expect(recipients).toEqual([
      { position: 0, status: 'delivered', attempts: 1, last_code: 250 },
      { position: 1, status: 'delivered', attempts: 1, last_code: 250 },
    ]);
    expect(await outboxOf(id)).toEqual([
      'email.sent',
      'sender.deliver',
      'sender.deliver',
      'email.delivered',
      'email.delivered',
    ]);
    const email = await db.selectFrom('emails').select('last_event').where('id', '=', id).executeTakeFirstOrThrow();
    expect(email.last_event).toBe('delivered');
    expect(await db.selectFrom('suppressions').selectAll().where('email', '=', 'a@postline.test').execute()).toEqual(
      [],
    );

    // The same attempts again (a redelivered batch) record nothing more.
    await db.transaction().execute((trx) => recordAttempts(deps(), trx, [first, other]));
    expect(await outboxOf(id)).toHaveLength(5);
  });

  it("keeps each attempt's own events, retries and suppressions apart within one batch", async () => {
    const bounced = await accept(['gone@far.test']);
    const deferred = await accept(['later@slow.test']);
    const loaded = await loadAttempts(db, [query(bounced, [0]), query(deferred, [0])]);
    await db.transaction().execute((trx) =>
      recordAttempts(deps(), trx, [
        attempted(loaded[0], 'far.test', [
          {
            kind: 'bounced',
            code: 550,
            response: '5.1.1 no such user',
            bounce: { type: 'Permanent', subType: 'General', suppress: true },
          },
        ]),
        { kind: 'skip' },
        attempted(loaded[1], 'slow.test', [{ kind: 'deferred', code: 452, response: '4.2.2 full', fromServer: true }]),
      ]),
    );
    expect(await outboxOf(bounced)).toEqual(['email.sent', 'sender.deliver', 'email.bounced']);
    expect(await outboxOf(deferred)).toEqual([
      'email.sent',
      'sender.deliver',
      'email.delivery_delayed',
      'scheduler.set-timer',
    ]);
    const lasts = await db
      .selectFrom('emails')
      .select(['id', 'last_event'])
      .where('id', 'in', [bounced, deferred])
      .execute();
    expect(Object.fromEntries(lasts.map((l) => [l.id, l.last_event]))).toEqual({
      [bounced]: 'bounced',
      [deferred]: 'delivery_delayed',
    });
    const suppressions = await db
      .selectFrom('suppressions')
      .select(['email', 'origin', 'source_id'])
      .where('team_id', '=', teamId)
      .where('email', '=', 'gone@far.test')
      .execute();
    expect(suppressions).toEqual([{ email: 'gone@far.test', origin: 'bounce', source_id: bounced }]);
    const later = await db
      .selectFrom('recipients')
      .select(['status', 'first_deferred_at'])
      .where('email_id', '=', deferred)
      .executeTakeFirstOrThrow();
    expect(later.status).toBe('deferred');
    expect(later.first_deferred_at).toBeInstanceOf(Date);
  });
});

describe('retries of deliveries held by the traffic shaping', () => {
  /** The retry timers set for an email, oldest first: when each is due and the command it sends. */
  async function retryTimersOf(emailId: string): Promise<{ due: number; command: Record<string, unknown> }[]> {
    const { rows } = await sql<{ due: string; command: Record<string, unknown> }>`select
        envelope->'data'->>'due_at' as due, envelope->'data'->'message'->'data' as command from outbox
      where routing_key = 'scheduler.set-timer' and envelope->'data'->'message'->'data'->>'email_id' = ${emailId}
      order by id`.execute(db);
    return rows.map((r) => ({ due: Date.parse(r.due), command: r.command }));
  }
  const refused: RecipientResult = { kind: 'deferred', code: 421, response: '421 4.7.28 Slow down', fromServer: true };
  const minute = 60_000;

  it('does not count a deferral by the shaping toward the back-off, and keeps the lifetime from the first deferral', async () => {
    const id = await accept(['held@provider.test']);
    const record = async (result: RecipientResult, at: { attempt: number; throttled: number }) => {
      const [loaded] = await loadAttempts(db, [query(id, [0], at.attempt)]);
      const started = Date.now();
      await db
        .transaction()
        .execute((trx) => recordAttempts(deps(), trx, [attempted(loaded, 'provider.test', [result], at)]));
      return started;
    };

    // Attempt 1: the provider refuses; the retry is the first step of the back-off.
    const first = await record(refused, { attempt: 1, throttled: 0 });
    const { first_deferred_at: deferredSince } = await db
      .selectFrom('recipients')
      .select('first_deferred_at')
      .where('email_id', '=', id)
      .executeTakeFirstOrThrow();
    // Attempt 2: its provider is held for 30 minutes; no connection was made.
    const holdEnds = new Date(Date.now() + 30 * minute);
    const held: RecipientResult = {
      kind: 'deferred',
      code: 451,
      response: '451 4.7.0 Deliveries to this mailbox provider are throttled: 421 4.7.28 Slow down',
      fromServer: false,
      throttle: { provider: 'gmail', until: holdEnds },
    };
    const second = await record(held, { attempt: 2, throttled: 0 });
    // Attempt 3, after the hold: refused again.
    const third = await record(refused, { attempt: 3, throttled: 1 });

    const [afterFirst, afterHeld, afterThird] = await retryTimersOf(id);
    expect(afterFirst!.command).toEqual({ email_id: id, domain: 'provider.test', recipients: [0], attempt: 2 });
    expect(afterFirst!.due - first).toBeGreaterThanOrEqual(4.5 * minute);
    // The held attempt comes back when the hold ends (within a tenth of the wait), marked as throttled.
    expect(afterHeld!.command).toEqual({
      email_id: id,
      domain: 'provider.test',
      recipients: [0],
      attempt: 3,
      throttled: 1,
    });
    expect(afterHeld!.due).toBeGreaterThanOrEqual(holdEnds.getTime());
    expect(afterHeld!.due - second).toBeLessThanOrEqual(33 * minute);
    // The refusal after the hold waits the second step (10 min ± 10%), not the third (20 min).
    expect(afterThird!.command).toMatchObject({ attempt: 4, throttled: 1 });
    expect(afterThird!.due - third).toBeGreaterThanOrEqual(9 * minute);
    expect(afterThird!.due - Date.now()).toBeLessThanOrEqual(11 * minute);

    const recipient = await db
      .selectFrom('recipients')
      .select(['status', 'attempts', 'first_deferred_at'])
      .where('email_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(recipient).toEqual({ status: 'deferred', attempts: 3, first_deferred_at: deferredSince });
  });
});

describe('a delivery to a provider held by the traffic shaping', () => {
  it('is deferred without making its message: nothing composed, signed or sent', async () => {
    const id = await accept(['waiting@held.test']);
    const until = new Date(Date.now() + 60_000);
    const asked: unknown[] = [];
    const heldMta: Mta = {
      held: (request) => {
        asked.push(request);
        return Promise.resolve(
          request.recipients.map((recipient) => ({
            status: 'deferred' as const,
            recipient,
            code: 451,
            enhanced: '4.7.0',
            response: '451 4.7.0 Deliveries to this mailbox provider are throttled: 421 4.7.28 Slow down',
            mx: null,
            throttle: { provider: 'gmail', until },
          })),
        );
      },
      deliver: () => Promise.reject(new Error('a held delivery must not reach the MTA')),
      inFlight: () => 0,
      close: () => Promise.resolve(),
    };
    const attemptDeps = {
      ...deps(),
      mta: heldMta,
      composer: {
        compose: () => Promise.reject(new Error('a held delivery must not be composed')),
        close: () => Promise.resolve(),
      },
    };
    const attempt = await attemptDelivery(attemptDeps, {
      team_id: teamId,
      data: { email_id: id, domain: 'held.test', recipients: [0], attempt: 1 },
    });
    expect(asked).toEqual([expect.objectContaining({ domain: 'held.test', recipients: ['waiting@held.test'] })]);
    expect(attempt).toMatchObject({
      kind: 'attempted',
      results: [{ kind: 'deferred', fromServer: false, throttle: { provider: 'gmail', until } }],
      messageHeaders: null,
    });
    await db.transaction().execute((trx) => recordAttempts(attemptDeps, trx, [attempt]));
    expect(await outboxOf(id)).toEqual([
      'email.sent',
      'sender.deliver',
      'email.delivery_delayed',
      'scheduler.set-timer',
    ]);
  });
});

describe('temporary suppression after repeated transient bounces', () => {
  async function bounceThrice(
    address: string,
    bounce: { type: 'Transient'; subType: 'MailboxFull' | 'ContentRejected' },
    spellings = [address, address, address],
  ) {
    for (const spelling of spellings) {
      const id = await accept([spelling]);
      const [loaded] = await loadAttempts(db, [query(id, [0])]);
      const result: RecipientResult = {
        kind: 'bounced',
        code: 552,
        response: '552 5.x.x refused',
        bounce: { ...bounce, suppress: false },
      };
      await db
        .transaction()
        .execute((trx) => recordAttempts(deps(), trx, [attempted(loaded, address.split('@')[1] as string, [result])]));
    }
    return db
      .selectFrom('suppressions')
      .select(['email', 'expires_at'])
      .where('team_id', '=', teamId)
      .where('email', '=', address)
      .execute();
  }

  it('suppresses a mailbox that was full three times, for a while, however its address was spelled', async () => {
    const suppressions = await bounceThrice('full-thrice@far.test', { type: 'Transient', subType: 'MailboxFull' }, [
      'Full-Thrice@far.test',
      'full-thrice@far.test',
      'FULL-THRICE@far.test',
    ]);
    expect(suppressions).toEqual([{ email: 'full-thrice@far.test', expires_at: expect.any(Date) }]);
  });

  it("sets an expiry timer that fired early again for the entry's time, and removes the entry once it is due", async () => {
    const [entry] = await db
      .transaction()
      .execute((trx) =>
        addSuppressions(
          trx,
          teamId,
          [{ email: 'early@far.test', origin: 'bounce', sourceId: null, expiresAt: new Date(Date.now() + 60_000) }],
          new Date(),
        ),
      );
    const id = (entry as SuppressionRow).id;
    expect(await db.transaction().execute((trx) => expireSuppression(trx, teamId, id, new Date()))).toBe('rearmed');
    const timers = await sql<{ due: string }>`select envelope->'data'->>'due_at' as due from outbox
      where routing_key = 'scheduler.set-timer' and envelope->'data'->>'key' = ${expiryTimerKey(id)}`.execute(db);
    expect(timers.rows.map((t) => Date.parse(t.due))).toEqual([
      entry!.expires_at!.getTime(),
      entry!.expires_at!.getTime(),
    ]);
    expect(await db.selectFrom('suppressions').select('id').where('id', '=', id).execute()).toHaveLength(1);

    expect(
      await db.transaction().execute((trx) => expireSuppression(trx, teamId, id, new Date(Date.now() + 61_000))),
    ).toBe('removed');
    expect(await db.selectFrom('suppressions').select('id').where('id', '=', id).execute()).toEqual([]);
  });

  it('replaces a temporary entry past its time that its late timer has not removed yet', async () => {
    const add = (expiresAt: Date, at: Date) =>
      db
        .transaction()
        .execute((trx) =>
          addSuppressions(
            trx,
            teamId,
            [{ email: 'late-timer@far.test', origin: 'bounce', sourceId: null, expiresAt }],
            at,
          ),
        );
    const [old] = await add(new Date(Date.now() + 1000), new Date());
    const later = new Date(Date.now() + 5000);
    const [fresh] = await add(new Date(later.getTime() + 60_000), later);
    expect(fresh!.id).not.toBe(old!.id);
    expect(fresh!.expires_at!.getTime()).toBe(later.getTime() + 60_000);
    const { rows } = await sql<{
      routing_key: string;
      id: string;
    }>`select routing_key, envelope->'data'->>'id' as id from outbox
      where routing_key like 'suppression.%' and envelope->'data'->>'email' = 'late-timer@far.test' order by id`.execute(
      db,
    );
    expect(rows.map((r) => [r.routing_key, r.id])).toEqual([
      ['suppression.added', old!.id],
      ['suppression.removed', old!.id],
      ['suppression.added', fresh!.id],
    ]);
    // The old entry's timer, when it comes, finds nothing to remove.
    expect(await db.transaction().execute((trx) => expireSuppression(trx, teamId, old!.id, later))).toBe('kept');
  });

  it('files a deferral that ran out of time against a block as ContentRejected, which no suppression counts', async () => {
    const id = await accept(['greylisted@far.test']);
    // Deferred since six days: past the five-day window.
    await db
      .updateTable('recipients')
      .set({ status: 'deferred', attempts: 1, first_deferred_at: new Date(Date.now() - 6 * 86_400_000) })
      .where('email_id', '=', id)
      .execute();
    const [loaded] = await loadAttempts(db, [query(id, [0], 2)]);
    const blocked: RecipientResult = {
      kind: 'deferred',
      code: 451,
      response: '451 4.7.1 Client host blocked using zen.spamhaus.org',
      fromServer: true,
    };
    const second = attempted(loaded, 'far.test', [blocked], { attempt: 2, throttled: 0 });
    await db.transaction().execute((trx) => recordAttempts(deps(), trx, [second]));
    const row = await db
      .selectFrom('recipients')
      .select(['status', 'bounce_type', 'bounce_sub_type'])
      .where('email_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'bounced', bounce_type: 'Transient', bounce_sub_type: 'ContentRejected' });
    const { rows } = await sql<{ bounce: { subType: string } }>`select envelope->'data'->'bounce' as bounce from outbox
      where routing_key = 'email.bounced' and envelope->'data'->>'email_id' = ${id}`.execute(db);
    expect(rows.map((r) => r.bounce.subType)).toEqual(['ContentRejected']);
  });

  it('never suppresses an address for refusals of the message (a block list, a spam filter)', async () => {
    expect(await bounceThrice('blocked-thrice@far.test', { type: 'Transient', subType: 'ContentRejected' })).toEqual(
      [],
    );
  });
});

describe('pruneAcceptedRequests', () => {
  it('deletes the idempotency keys past their day, a batch at a time until none is left, and keeps the others', async () => {
    const team = newId();
    const day = 24 * 3600_000;
    const row = (key: string, age: number) => ({
      team_id: team,
      idempotency_key: key,
      request_hash: null,
      response: JSON.stringify({ id: key }),
      created_at: new Date(Date.now() - age),
    });
    await db
      .insertInto('accepted_requests')
      .values([row('old-1', day + 1000), row('old-2', day + 2000), row('old-3', day + 3000), row('fresh', 1000)])
      .execute();
    expect(await pruneAcceptedRequests(db, new Date(), { batch: 2 })).toBe(3);
    const left = await db
      .selectFrom('accepted_requests')
      .select('idempotency_key')
      .where('team_id', '=', team)
      .execute();
    expect(left.map((r) => r.idempotency_key)).toEqual(['fresh']);
  });
});

describe('the read model of sending domains', () => {
  const state = (domainId: string, teamId: string, deleted: boolean): DomainState => ({
    domain_id: domainId,
    team_id: teamId,
    name: 'comeback.test',
    status: 'verified',
    capabilities: { sending: 'enabled', receiving: 'disabled' },
    dkim_selector: 'postline',
    dkim_private_key_encrypted: 'sealed',
    return_path: 'send.comeback.test',
    sending_verified: true,
    receiving_verified: false,
    tls: 'opportunistic',
    open_tracking: false,
    click_tracking: false,
    deleted,
  });
  const lookup = async (team: string) =>
    (await findSendingDomains(db, [{ teamId: team, name: 'comeback.test' }]))(team, 'comeback.test');

  it('keeps a deleted domain deleted when an older state of it arrives afterwards, and finds the domain added again', async () => {
    const team = newId();
    const old = newId();
    await db
      .transaction()
      .execute((trx) => applyDomainState(trx, state(old, team, false), new Date(Date.now() - 2000)));
    expect((await lookup(team))?.domain_id).toBe(old);
    await db.transaction().execute((trx) => applyDomainState(trx, state(old, team, true), new Date()));
    // Overtaken, or back from a retry tier: a verified state from before the deletion.
    await db
      .transaction()
      .execute((trx) => applyDomainState(trx, state(old, team, false), new Date(Date.now() - 1000)));
    expect(await lookup(team)).toBeUndefined();
    const row = await db
      .selectFrom('sending_domains')
      .select(['deleted', 'sending_verified', 'dkim_private_key_encrypted'])
      .where('domain_id', '=', old)
      .executeTakeFirstOrThrow();
    // The tombstone keeps no key.
    expect(row).toEqual({ deleted: true, sending_verified: false, dkim_private_key_encrypted: '' });

    const again = newId();
    await db.transaction().execute((trx) => applyDomainState(trx, state(again, team, false), new Date()));
    expect((await lookup(team))?.domain_id).toBe(again);
  });
});

describe('a send to an address on the suppression list', () => {
  it('names the earlier bounce or complaint as the reason, and none for an address added by hand', async () => {
    const addresses = {
      bounce: 'delivered+sb@postline.test',
      complaint: 'delivered+sc@postline.test',
      manual: 'delivered+sm@postline.test',
    } as const;
    await db.transaction().execute((trx) =>
      addSuppressions(
        trx,
        teamId,
        Object.entries(addresses).map(([origin, email]) => ({
          email,
          origin: origin as SuppressionOrigin,
          sourceId: null,
        })),
        new Date(),
      ),
    );
    const reasons: Record<string, unknown> = {};
    for (const [origin, address] of Object.entries(addresses)) {
      const id = await accept([address]);
      const attempt = await attemptDelivery(
        { ...deps(), mta: {} as Mta },
        { team_id: teamId, data: { email_id: id, domain: 'postline.test', recipients: [0], attempt: 1 } },
      );
      await db.transaction().execute((trx) => recordAttempts(deps(), trx, [attempt]));
      const { rows } = await sql<{
        suppressed: Record<string, unknown>;
      }>`select envelope->'data'->'suppressed' as suppressed from outbox
        where routing_key = 'email.suppressed' and envelope->'data'->>'email_id' = ${id}`.execute(db);
      reasons[origin] = rows[0]?.suppressed;
    }
    expect(reasons).toEqual({
      bounce: expect.objectContaining({ type: 'OnAccountSuppressionList', reason: 'previous_bounce' }),
      complaint: expect.objectContaining({ type: 'OnAccountSuppressionList', reason: 'previous_complaint' }),
      manual: { type: 'OnAccountSuppressionList', message: expect.any(String) },
    });
  });
});

describe('attemptDelivery of a message that cannot be made', () => {
  const box = createSecretBox('0'.repeat(64));
  const logged: unknown[] = [];
  const refusingMta: Mta = {
    deliver: () => Promise.reject(new Error('nothing unsigned or unbuilt may reach the MTA')),
    held: () => Promise.resolve(undefined),
    inFlight: () => 0,
    close: () => Promise.resolve(),
  };

  async function attemptOf(sending: SendingDomainRow, fields: { subject: string }) {
    await db.insertInto('sending_domains').values(sending).execute();
    const request = parsed(
      { from: `hi@${sending.name}`, to: ['someone@far.test'], text: 'Hi', ...fields },
      { now, batch: false },
    );
    const [id] = await acceptEmails(
      db,
      { idempotency: undefined, emails: [{ request, domain: sending }], now },
      (ids) => ids,
    );
    const attemptDeps = {
      ...deps(),
      mta: refusingMta,
      logger: { error: (...args: unknown[]) => logged.push(args) } as never,
    };
    const attempt = await attemptDelivery(attemptDeps, {
      team_id: sending.team_id,
      data: { email_id: id as string, domain: 'far.test', recipients: [0], attempt: 1 },
    });
    await db.transaction().execute((trx) => recordAttempts(attemptDeps, trx, [attempt]));
    const recipient = await db
      .selectFrom('recipients')
      .select(['status'])
      .where('email_id', '=', id as string)
      .executeTakeFirstOrThrow();
    const failed = await sql<{ data: unknown }>`select envelope->'data'->'failed' as data from outbox
      where routing_key = 'email.failed' and envelope->'data'->>'email_id' = ${id}`.execute(db);
    return { attempt, recipient, failed: failed.rows.map((r) => r.data) };
  }

  it("fails the recipients with dkim_signing_failed when the domain's key cannot sign, and never sends unsigned", async () => {
    const team = newId();
    const { attempt, recipient, failed } = await attemptOf(
      {
        ...domain,
        domain_id: newId(),
        team_id: team,
        name: 'badkey.test',
        dkim_private_key_encrypted: box.seal('not a key'),
      },
      { subject: 'Hello' },
    );
    expect(attempt).toMatchObject({ kind: 'attempted', results: [{ kind: 'failed', reason: 'dkim_signing_failed' }] });
    expect(recipient.status).toBe('failed');
    expect(failed).toEqual([{ reason: 'dkim_signing_failed' }]);
  });

  it('fails the recipients with message_not_composable when the composer refuses the email', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const team = newId();
    // A subject of one 998-character word: no header line can hold it (RFC 5322 §2.1.1).
    const { attempt, recipient, failed } = await attemptOf(
      {
        ...domain,
        domain_id: newId(),
        team_id: team,
        name: 'longword.test',
        dkim_private_key_encrypted: box.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
      },
      { subject: 'x'.repeat(998) },
    );
    expect(attempt).toMatchObject({
      kind: 'attempted',
      results: [{ kind: 'failed', reason: 'message_not_composable' }],
    });
    expect(recipient.status).toBe('failed');
    expect(failed).toEqual([{ reason: 'message_not_composable' }]);
  });
});

describe('on a table that grew after its statements were first planned, and was never analyzed (no autovacuum)', () => {
  it('reads and records attempts, and counts the recipients waiting, without scanning the recipients or emails tables', async () => {
    // One connection, so that the statements planned while the table was young are the ones used after it
    // grew, and so that its statistics can be flushed before each reading.
    const { db: one } = createDb<SenderDb>({ url: database.url, schema: SCHEMA, max: 1 });
    const scans = () => sequentialScans(one, SCHEMA, ['emails', 'recipients']);
    const deliver = async (ids: string[]) => {
      const loaded = await loadAttempts(
        one,
        ids.map((id) => query(id, [0, 1])),
      );
      await one.transaction().execute((trx) =>
        recordAttempts(
          deps(),
          trx,
          loaded.map((l) => attempted(l, 'near.test', [delivered, delivered])),
        ),
      );
    };
    const ids = await Promise.all(Array.from({ length: 28 }, () => accept(['a@near.test', 'b@near.test'])));
    try {
      // Past the five calls after which a prepared statement may keep a generic plan.
      for (let round = 0; round < 8; round++) await deliver(ids.slice(round, round + 1));
      await sql`insert into recipients (email_id, position, team_id, address, domain, status)
        select gen_random_uuid(), 0, ${otherTeam}, 'r' || g || '@far.test', 'far.test', case when g % 100 = 0 then 'pending' else 'delivered' end
        from generate_series(1, 30000) g`.execute(one);
      // And as many emails, copies of the first with ids of their own.
      await sql`insert into emails select (jsonb_populate_record(e, jsonb_build_object('id', gen_random_uuid(), 'team_id', ${otherTeam}::uuid))).*
        from emails e, generate_series(1, 30000) where e.id = ${ids[0]}`.execute(one);
      const before = await scans();
      for (let round = 0; round < 6; round++) await deliver(ids.slice(8 + round * 3, 11 + round * 3));
      expect(await scans()).toEqual(before);
      // What every /metrics scrape reads: 300 of the seeded recipients, the last two emails' 4, and those
      // the tests before left waiting. Checked against a plain count, which scans, so only after the scans
      // are read.
      const waiting = await waitingRecipients(one);
      expect(await scans()).toEqual(before);
      const counted = await db
        .selectFrom('recipients')
        .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
        .where('status', 'in', ['pending', 'deferred'])
        .groupBy('status')
        .orderBy('status')
        .execute();
      expect(counted[0]).toEqual({ status: 'deferred', n: expect.any(String) });
      expect(Number(counted[1]?.n)).toBeGreaterThan(304);
      expect(waiting).toEqual(counted.map((c) => ({ status: c.status, n: Number(c.n), oldest: expect.any(Number) })));
      const statuses = await db.selectFrom('recipients').select('status').where('email_id', 'in', ids).execute();
      expect(statuses.map((s) => s.status).sort()).toEqual([
        ...Array.from({ length: 52 }, () => 'delivered'),
        ...Array.from({ length: 4 }, () => 'pending'),
      ]);
    } finally {
      await one.destroy();
    }
  });
});

describe('delivery claims: one SMTP transaction per attempt across processes', () => {
  const box = createSecretBox('0'.repeat(64));
  const silent = { warn: () => undefined, error: () => undefined, info: () => undefined } as never;
  const STALE_MS = 600;
  let sending: SendingDomainRow;
  const running: DeliveryClaims[] = [];

  beforeAll(async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    sending = {
      ...domain,
      domain_id: newId(),
      team_id: newId(),
      name: 'claims.test',
      dkim_private_key_encrypted: box.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
    };
    await db.insertInto('sending_domains').values(sending).execute();
  });

  afterAll(() => {
    for (const claims of running) claims.part.stop();
  });

  /** A sender process: its own claims (refreshed while it runs) and an MTA that answers when told. */
  function process(name: string) {
    const claims = createDeliveryClaims({ db, logger: silent, staleMs: STALE_MS });
    claims.part.start();
    running.push(claims);
    const calls: string[] = [];
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const mta: Mta = {
      deliver: async (request) => {
        calls.push(name);
        await answered;
        return request.recipients.map((recipient) => ({
          recipient,
          status: 'delivered' as const,
          code: 250,
          response: '2.0.0 OK',
          mx: 'mx.far.test',
        }));
      },
      held: () => Promise.resolve(undefined),
      inFlight: () => 0,
      close: () => Promise.resolve(),
    };
    let held = 0;
    let retaken = 0;
    const processDeps: DeliverDeps = {
      ...deps(),
      mta,
      logger: silent,
      claims: {
        claim: async (c) => {
          const r = await claims.claim(c);
          if (r.kind === 'held') held++;
          return r;
        },
        release: claims.release,
      },
      heldPollMs: 50,
      onRetaken: () => retaken++,
    };
    return { claims, calls, answer, deps: processDeps, held: () => held, retaken: () => retaken };
  }

  async function acceptOne(): Promise<string> {
    const request = parsed(
      { from: 'hi@claims.test', to: ['someone@far.test'], subject: 'Claims', text: 'Hi' },
      { now, batch: false },
    );
    const [id] = await acceptEmails(
      db,
      { idempotency: undefined, emails: [{ request, domain: sending }], now },
      (ids) => ids,
    );
    return id as string;
  }

  const command = (id: string) => ({
    team_id: sending.team_id,
    data: { email_id: id, domain: 'far.test', recipients: [0], attempt: 1 },
  });

  it('a copy of the command in a second process waits for the transaction of the first and sends nothing', async () => {
    const id = await acceptOne();
    const a = process('a');
    const b = process('b');
    const first = attemptDelivery(a.deps, command(id));
    await waitFor('the first transaction under way', () => a.calls.length === 1);
    const copy = attemptDelivery(b.deps, command(id));
    // The first process keeps its claim fresh well past the stale time: the copy keeps waiting.
    await waitFor('the copy to find the claim held for three stale times', () => b.held() * 50 > 3 * STALE_MS, 10_000);
    expect(b.calls).toEqual([]);

    a.answer();
    const made = await first;
    await db.transaction().execute((trx) => recordAttempts(a.deps, trx, [made]));
    expect(await copy).toEqual({ kind: 'skip' });
    expect(b.calls).toEqual([]);
    expect(b.retaken()).toBe(0);
  });

  it('a copy takes over the claim of a process that died mid-transaction once it is stale, sends again and counts it', async () => {
    const id = await acceptOne();
    // A process that claimed the attempt and died (SIGKILL): nothing refreshes its claim, no outcome comes.
    const dead = createDeliveryClaims({ db, logger: silent, staleMs: STALE_MS });
    expect(await dead.claim({ emailId: id, firstPosition: 0, attempt: 1 })).toEqual({
      kind: 'claimed',
      retaken: false,
    });

    const b = process('b');
    b.answer();
    const made = await attemptDelivery(b.deps, command(id));
    expect(made).toMatchObject({ kind: 'attempted', results: [{ kind: 'delivered' }] });
    // It waited while the claim was fresh, then sent once, counted as an attempt whose first outcome is unknown.
    expect(b.held()).toBeGreaterThan(0);
    expect(b.calls).toEqual(['b']);
    expect(b.retaken()).toBe(1);
  });
});
