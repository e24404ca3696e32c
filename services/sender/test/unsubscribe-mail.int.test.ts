// The List-Unsubscribe mailto path on the sender's side: `internal.contact.unsubscribe-mail` (published by
// the inbound MX for a mail to unsubscribe@<return path>) unsubscribes the token's contact as the one-click
// POST does; a tampered token, another team's, or a deleted contact's changes nothing and is acked (never
// retried). Real services on RabbitMQ and Postgres; tokens signed as broadcasts sign them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import type { Resend } from 'resend';
import { createDb } from '@postline/platform';
import {
  dataOf,
  observeBroker,
  waitFor,
  type BrokerObserver,
  testResend,
  useSystem,
  type SharedSystem,
} from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import type { SenderDb } from '../src/db/schema.ts';
import { createUnsubscribeSigner } from '../src/engagement/domain/unsubscribe-links.ts';

jest.setTimeout(60_000);

const SECRET_KEY = 'e2e-secret-key-not-for-production';
const signer = createUnsubscribeSigner(SECRET_KEY);

let system: SharedSystem;
let events: BrokerObserver;
let db: Kysely<SenderDb>;
let teamId: string;
let otherTeamId: string;
let resend: Resend;

const world = useSystem();

beforeAll(async () => {
  ({ system } = world);
  const team = await system.admin('team', 'create', '--name', 'Mailto');
  teamId = String(team.team_id);
  resend = testResend(String(team.api_key), system.apiUrl);
  otherTeamId = String((await system.admin('team', 'create', '--name', 'Other')).team_id);
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'contact.updated' }],
  });
  db = createDb<SenderDb>({ url: String(system.env.DATABASE_URL), schema: SCHEMA }).db;
}, 90_000);

afterAll(async () => {
  await events?.close();
  await db?.destroy();
}, 30_000);

let counter = 0;
async function newContact(): Promise<string> {
  return dataOf(await resend.contacts.create({ email: `reader${Date.now().toString(36)}${counter++}@example.com` })).id;
}

const tokenOf = (contactId: string, team = teamId) =>
  signer.sign({ teamId: team, contactId, broadcastId: randomUUID() });
const unsubscribed = async (contactId: string) => dataOf(await resend.contacts.get({ id: contactId })).unsubscribed;
const updatesOf = (contactId: string) => events.messages.filter((m) => m.envelope.data.id === contactId);

/** Publishes a request as the inbound MX does, for the return path of `team`; returns the message id. */
const mail = (token: string, team = teamId) =>
  events.publishEvent('internal.contact.unsubscribe-mail', team, { token, from: 'reader@example.com' });

/**
 * Waits until the sender's consumer has handled these messages: their inbox rows commit with the handler's
 * transaction, so a handler that threw (to be retried or dead-lettered) leaves none.
 */
async function handled(ids: string[]): Promise<void> {
  await waitFor(`the sender to handle ${ids.length} unsubscribe mails`, async () => {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from inbox where message_id = any(${ids}::uuid[])`.execute(db);
    return rows[0]?.n === ids.length;
  });
}

describe('internal.contact.unsubscribe-mail', () => {
  it("unsubscribes the token's contact from every broadcast, once", async () => {
    const contact = await newContact();
    expect(await unsubscribed(contact)).toBe(false);
    const first = mail(tokenOf(contact));
    await events.waitFor(
      'contact.updated',
      (m) => m.envelope.data.id === contact && m.envelope.data.unsubscribed === true,
    );
    expect(await unsubscribed(contact)).toBe(true);

    // The same request again (a second mail, or the MX's redelivery): nothing more.
    const again = mail(tokenOf(contact));
    await handled([first, again]);
    expect(updatesOf(contact)).toHaveLength(1);
  });

  it("changes nothing for a tampered token, another team's, or a deleted contact's, and is not retried", async () => {
    const tampered = await newContact();
    const foreign = await newContact();
    const deleted = await newContact();
    await resend.contacts.remove({ id: deleted });
    const token = tokenOf(tampered);
    const ids = [
      mail(`${token.slice(0, -2)}${token.endsWith('AA') ? 'AB' : 'AA'}`),
      mail('not-a-token'),
      // A token of this team's contact, mailed to the other team's return path.
      mail(tokenOf(foreign), otherTeamId),
      mail(tokenOf(deleted)),
    ];
    await handled(ids);
    expect(await unsubscribed(tampered)).toBe(false);
    expect(await unsubscribed(foreign)).toBe(false);
    expect([...updatesOf(tampered), ...updatesOf(foreign)]).toEqual([]);
  });
});
