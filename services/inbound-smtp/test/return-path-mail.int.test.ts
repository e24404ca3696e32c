// recordReturnPathMail on a real Postgres, in a transaction as the MX opens one: the outbox rows a bounce,
// a complaint and an unsubscribe request cause, the row kept per message and RCPT, a forged or unmatched
// report dropped with a log line that holds no body, and the MX's redelivery of a message causing nothing.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { createDb, createLogger, newId, verpAddress, type Logger } from '@postline/platform';
import { createTestDatabase, type TestDatabase } from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import type { InboundDb } from '../src/db/schema.ts';
import { recordReturnPathMail, type ReturnPathMail } from '../src/use-cases/return-path-mail.ts';

const KEY = 'fixture-verp-key';
const TEAM = newId();
const OTHER_TEAM = newId();
/** The fixtures' VERP addresses, tagged with KEY at send.acme.test. */
const V0 = 'b.0190a6f48b4a700080000000000000a1.0.r34l57ry44@send.acme.test';
const VX = 'b.0190a6f48b4a700080000000000000a2.x.pdhsy5rwie@send.acme.test';
const VX4 = 'b.0190a6f48b4a700080000000000000a4.x.h4bp6dreg5@send.acme.test';
const EMAIL = (n: number) => `0190a6f4-8b4a-7000-8000-0000000000a${n}`;

let database: TestDatabase;
let db: Kysely<InboundDb>;
const logged: Record<string, unknown>[] = [];
const logger: Logger = createLogger({
  service: 'test',
  destination: { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) },
});

const fixture = (name: string) =>
  Buffer.from(
    readFileSync(new URL(`./fixtures/${name}`, import.meta.url))
      .toString('latin1')
      .replace(/\r?\n/g, '\r\n'),
    'latin1',
  );

beforeAll(async () => {
  database = await createTestDatabase('returnpath');
  db = createDb<InboundDb>({ url: database.url, schema: SCHEMA }).db;
  await migrate(db);
  const domain = (team: string, name: string, returnPath: string, deleted = false) => ({
    domain_id: newId(),
    team_id: team,
    name,
    return_path: returnPath,
    receiving_verified: false,
    sending_enabled: true,
    deleted,
    state_at: new Date(),
  });
  await db
    .insertInto('receiving_domains')
    .values([
      domain(TEAM, 'acme.test', 'send.acme.test'),
      domain(TEAM, 'two.test', 'send.two.test'),
      domain(TEAM, 'gone.test', 'send.gone.test', true),
      domain(OTHER_TEAM, 'other.test', 'send.other.test'),
    ])
    .execute();
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

const at = (address: string, team = TEAM) => ({ address, teamId: team, returnPath: address.split('@')[1]! });

function mailOf(raw: Buffer, recipients: ReturnPathMail['recipients'], envelopeFrom = ''): ReturnPathMail {
  return { raw, envelopeFrom, recipients, remoteAddress: '192.0.2.25', receivedAt: new Date() };
}

/** Records as the MX does: in one transaction, committed. */
const record = (mail: ReturnPathMail) =>
  db.transaction().execute((trx) => recordReturnPathMail(trx, mail, { verpKey: KEY, logger }));

type OutboxRow = { routing_key: string; envelope: { team_id: string; data: Record<string, unknown> } };
async function outboxSince(mark: string): Promise<OutboxRow[]> {
  const { rows } =
    await sql<OutboxRow>`select routing_key, envelope from outbox where id > ${mark}::uuid order by id`.execute(db);
  return rows;
}

async function rowsFor(recipient: string) {
  return db
    .selectFrom('return_path_mail')
    .selectAll()
    .where('recipient', '=', recipient.toLowerCase())
    .orderBy('id')
    .execute();
}

describe('recordReturnPathMail', () => {
  it('publishes one internal.email.feedback per failed recipient of a DSN, for the return path’s team, and keeps a row', async () => {
    const mark = newId();
    const raw = fixture('postfix-failed.eml');
    expect(await record(mailOf(raw, [at(VX)]))).toEqual(['bounce']);
    const outbox = await outboxSince(mark);
    expect(outbox.map((row) => [row.routing_key, row.envelope.team_id])).toEqual([
      ['internal.email.feedback', TEAM],
      ['internal.email.feedback', TEAM],
    ]);
    expect(outbox.map((row) => row.envelope.data)).toEqual([
      {
        email_id: EMAIL(2),
        recipient: 'alice@example.net',
        kind: 'bounce',
        bounce: expect.objectContaining({
          type: 'Permanent',
          subType: 'General',
          diagnosticCode: [expect.stringContaining('550 5.1.1')],
        }),
        suppress: true,
      },
      {
        email_id: EMAIL(2),
        recipient: 'Bob@Example.net',
        kind: 'bounce',
        bounce: expect.objectContaining({ type: 'Transient', subType: 'MailboxFull' }),
        suppress: false,
      },
    ]);
    const [row] = await rowsFor(VX);
    expect(row).toMatchObject({
      team_id: TEAM,
      outcome: 'bounce',
      email_id: EMAIL(2),
      feedback_count: 2,
      envelope_from: '',
      remote_address: '192.0.2.25',
    });
    expect(row?.excerpt).toMatch(/^Reporting-MTA: dns; mx.example.net/);
    expect(row?.excerpt).not.toContain('DKIM-Signature');

    // The MX's client sends the same message again (its 250 was lost): the same outcome, nothing published.
    const again = newId();
    expect(await record(mailOf(raw, [at(VX.toUpperCase())]))).toEqual(['bounce']);
    expect(await outboxSince(again)).toEqual([]);
    expect(await rowsFor(VX)).toHaveLength(1);
  });

  it('publishes a complaint found through the report to an enrolled mailbox, and the position of a VERP RCPT', async () => {
    const mark = newId();
    expect(await record(mailOf(fixture('yahoo-arf.eml'), [at('abuse@send.acme.test')]))).toEqual(['complaint']);
    expect(await record(mailOf(fixture('gmail-failed.eml'), [at(V0)]))).toEqual(['bounce']);
    expect((await outboxSince(mark)).map((row) => row.envelope.data)).toEqual([
      { email_id: EMAIL(4), recipient: 'frank.lee@yahoo.com', kind: 'complaint', feedback_type: 'abuse' },
      {
        email_id: EMAIL(1),
        recipient_position: 0,
        kind: 'bounce',
        bounce: expect.objectContaining({ type: 'Permanent', subType: 'General' }),
        suppress: true,
      },
    ]);
  });

  it('accepts a VERP address at another return path of the same team, not at a deleted one or another team’s', async () => {
    const withMailFrom = (verp: string) =>
      Buffer.from(
        fixture('yahoo-arf.eml')
          .toString('latin1')
          .replace(`Original-Mail-From: <${VX4}>`, `Original-Mail-From: <${verp}>`)
          .replace('Weekly deals', `Deals ${verp.slice(0, 40)}`),
        'latin1',
      );
    const verp = (returnPath: string) => verpAddress({ emailId: EMAIL(6), recipient: 3, returnPath, key: KEY });
    const mark = newId();
    const outcomes = await record(mailOf(withMailFrom(verp('send.two.test')), [at('abuse@send.acme.test')]));
    expect(outcomes).toEqual(['complaint']);
    expect(await record(mailOf(withMailFrom(verp('send.gone.test')), [at('abuse@send.acme.test')]))).toEqual([
      'forged',
    ]);
    expect(await record(mailOf(withMailFrom(verp('send.other.test')), [at('abuse@send.acme.test')]))).toEqual([
      'forged',
    ]);
    expect((await outboxSince(mark)).map((row) => row.envelope.data)).toEqual([
      { email_id: EMAIL(6), recipient_position: 3, kind: 'complaint', feedback_type: 'abuse' },
    ]);
  });

  it('drops a forged and an unmatched report: a row and a log line without the body, nothing published', async () => {
    const mark = newId();
    const forged = VX.replace('.x.', '.7.');
    const raw = fixture('postfix-failed.eml');
    logged.length = 0;
    expect(await record(mailOf(raw, [at(forged)], 'mailer-daemon@mx.example.net'))).toEqual(['forged']);
    const noVerp = Buffer.from('From: someone@example.com\r\nSubject: hello\r\n\r\nsecret body text\r\n');
    expect(await record(mailOf(noVerp, [at('postmaster@send.acme.test')]))).toEqual(['unmatched']);
    expect(await outboxSince(mark)).toEqual([]);
    expect(await rowsFor(forged)).toEqual([
      expect.objectContaining({
        outcome: 'forged',
        email_id: null,
        feedback_count: 0,
        detail: 'VERP tag does not verify',
      }),
    ]);
    expect(logged).toEqual([
      expect.objectContaining({
        level: 'info',
        recipient: forged,
        outcome: 'forged',
        envelopeFrom: 'mailer-daemon@mx.example.net',
      }),
      expect.objectContaining({ level: 'info', recipient: 'postmaster@send.acme.test', outcome: 'unmatched' }),
    ]);
    expect(JSON.stringify(logged)).not.toMatch(/secret body text|User unknown/);
  });

  it('publishes an unsubscribe request for the return path’s team, and records a delayed DSN without publishing', async () => {
    const mark = newId();
    const outcomes = await record(
      mailOf(fixture('unsubscribe-request.eml'), [at('unsubscribe@send.acme.test')], 'mia@example.com'),
    );
    expect(outcomes).toEqual(['unsubscribe']);
    expect(await record(mailOf(fixture('postfix-delayed.eml'), [at(V0)]))).toEqual(['delayed']);
    const outbox = await outboxSince(mark);
    expect(outbox).toEqual([
      {
        routing_key: 'internal.contact.unsubscribe-mail',
        envelope: expect.objectContaining({
          team_id: TEAM,
          data: {
            token: 'AZBxpvSLSnAAgAAAAAAAAAGAZBxpvSLSnAAgAAAAAAAAAJAZBxpvSLSnAAgAAAAAAAAAM.c2lnbmF0dXJlLXRhZy0xMjM0',
            from: 'mia@example.com',
          },
        }),
      },
    ]);
    expect(await rowsFor(V0)).toEqual(
      expect.arrayContaining([expect.objectContaining({ outcome: 'delayed', email_id: EMAIL(1), feedback_count: 0 })]),
    );
  });

  it('gives each RCPT of one message its own outcome and team', async () => {
    const mark = newId();
    const raw = fixture('qmail-failed.eml');
    const otherVerp = verpAddress({ emailId: EMAIL(7), returnPath: 'send.other.test', key: KEY });
    expect(await record(mailOf(raw, [at(VX), at(otherVerp, OTHER_TEAM)]))).toEqual(['bounce', 'bounce']);
    const outbox = await outboxSince(mark);
    expect(
      outbox.map((row) => [row.envelope.team_id, row.envelope.data.email_id, row.envelope.data.recipient]),
    ).toEqual([
      [TEAM, EMAIL(2), 'henry@example.com'],
      [TEAM, EMAIL(2), 'ivy@nohost.example.com'],
      [TEAM, EMAIL(2), 'jack@example.com'],
      [OTHER_TEAM, EMAIL(7), 'henry@example.com'],
      [OTHER_TEAM, EMAIL(7), 'ivy@nohost.example.com'],
      [OTHER_TEAM, EMAIL(7), 'jack@example.com'],
    ]);
  });

  it('stores a message with NUL characters in its text, and rolls back with the MX’s transaction', async () => {
    const raw = Buffer.from(
      `From: MAILER-DAEMON@x.test\r\nSubject: failure notice\r\n\r\n550 5.1.1 gone\u0000here\r\n`,
      'latin1',
    );
    expect(await record(mailOf(raw, [at(V0)]))).toEqual(['bounce']);
    const mark = newId();
    const rolledBack = Buffer.from(
      'From: MAILER-DAEMON@x.test\r\nSubject: failure notice\r\n\r\n550 5.1.1 rolled back\r\n',
    );
    await expect(
      db.transaction().execute(async (trx) => {
        await recordReturnPathMail(trx, mailOf(rolledBack, [at(V0)]), { verpKey: KEY, logger });
        throw new Error('the MX could not commit');
      }),
    ).rejects.toThrow('the MX could not commit');
    expect(await outboxSince(mark)).toEqual([]);
    expect(await record(mailOf(rolledBack, [at(V0)]))).toEqual(['bounce']);
    expect(await outboxSince(mark)).toHaveLength(1);
  });
});
