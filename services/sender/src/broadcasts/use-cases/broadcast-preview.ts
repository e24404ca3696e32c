// A broadcast as one contact would receive it (GET /broadcasts/{id}/preview, Postline's): personalised by the
// fan-out's own renderer with the contact's properties and its real unsubscribe link; and test copies of it
// (POST /broadcasts/{id}/test, Postline's), one per address, accepted as POST /emails accepts an email and
// delivered by the same pipeline, but not the broadcast's: no broadcast_id (so neither its results nor its
// metrics count them), tagged `broadcast_test` with the broadcast's id, the subject marked [Test].
import type { Kysely } from 'kysely';
import { isUuid, notFound, validationError } from '@postline/platform';
import { findContact, findPropertyDefinitions } from '../../audience/index.ts';
import type { BroadcastRow, ContactRow, SenderDb } from '../../db/schema.ts';
import { checkSender, senderRefusal, writeEmailNow } from '../../emails/index.ts';
import { unsubscribeUrl, type UnsubscribeSigner } from '../../engagement/index.ts';
import { parseMailbox, refusalError, type EmailRequest } from '../../message/index.ts';
import { findSendingDomains } from '../../sending-domains/index.ts';
import { checkBroadcastMessage, personaliseBroadcast, type PersonalisedMessage } from '../domain/broadcast-emails.ts';
import { messageOf, requireBroadcast } from './broadcasts.ts';

export type PreviewDeps = {
  db: Kysely<SenderDb>;
  now: () => Date;
  devInbox?: boolean;
  unsubscribeLinks: UnsubscribeSigner;
  /** PUBLIC_BASE_URL: where the unsubscribe links are served. */
  publicBaseUrl: string;
};

/** A contact named by id or by email address. */
export type ContactChoice = { id: string } | { email: string };

/** The tag a test copy carries: its value is the broadcast's id. */
export const TEST_TAG = 'broadcast_test';

/** At most this many addresses per test. */
export const MAX_TEST_ADDRESSES = 10;

export async function previewOf(
  deps: PreviewDeps,
  teamId: string,
  id: string,
  choice: ContactChoice,
): Promise<{ broadcast: BroadcastRow; contact: ContactRow; message: PersonalisedMessage }> {
  const broadcast = await requireBroadcast(deps.db, teamId, id);
  const contact = await requireContact(deps.db, teamId, choice);
  return { broadcast, contact, message: await personalisedFor(deps, broadcast, contact) };
}

/**
 * Sends one copy of the broadcast to each address, personalised for `choice`'s contact (its properties, its
 * unsubscribe link), or, without one, for a contact with no fields but the address (fallbacks shown).
 * The message and its from domain are checked as sending the broadcast checks them. Returns the emails' ids.
 */
export async function sendTestCopies(
  deps: PreviewDeps,
  teamId: string,
  id: string,
  to: readonly string[],
  choice: ContactChoice | undefined,
): Promise<{ id: string; to: string }[]> {
  const broadcast = await requireBroadcast(deps.db, teamId, id);
  const now = deps.now();
  const checked = checkBroadcastMessage(messageOf(broadcast), now);
  if (!checked.ok) throw refusalError(checked.refusal);
  const addresses = to.map((address) => {
    const mailbox = parseMailbox(address);
    if (!mailbox) throw validationError(`Invalid \`to\` address: ${address}`);
    return mailbox.address;
  });
  const { request } = checked;
  const domains = await findSendingDomains(deps.db, [{ teamId, name: request.fromDomain }]);
  const sender = checkSender(domains(teamId, request.fromDomain), request, {
    members: [],
    devInbox: deps.devInbox ?? false,
  });
  if (!sender.ok) throw senderRefusal(sender);
  const contact = choice === undefined ? undefined : await requireContact(deps.db, teamId, choice);

  const copies: EmailRequest[] = [];
  for (const address of addresses) {
    // The chosen contact's fields and properties, never its unsubscribe link: a copy sent to someone else
    // must not let them unsubscribe the contact (its link leads to no contact's page).
    const stand = contact
      ? { ...contact, id: null }
      : { id: null, email: address, first_name: null, last_name: null, properties: {} };
    const message = await personalisedFor(deps, broadcast, stand);
    copies.push({
      ...request,
      to: [address],
      cc: [],
      bcc: [],
      subject: `[Test] ${message.subject}`,
      html: message.html,
      text: message.text,
      headers: [],
      attachments: [],
      tags: [{ name: TEST_TAG, value: broadcast.id }],
      scheduledAt: null,
      topicId: null,
      templateId: undefined,
    });
  }
  return deps.db.transaction().execute(async (trx) => {
    const sent: { id: string; to: string }[] = [];
    for (const copy of copies) {
      sent.push({ id: await writeEmailNow(trx, copy, sender.domain, now), to: copy.to[0] ?? '' });
    }
    return sent;
  });
}

/**
 * The broadcast as `contact` gets it. The unsubscribe link is the contact's own (signed as the fan-out signs
 * it); a stand-in without an id gets a link to no contact, whose page says the link is not valid.
 */
async function personalisedFor(
  deps: PreviewDeps,
  broadcast: BroadcastRow,
  contact: Pick<ContactRow, 'email' | 'first_name' | 'last_name' | 'properties'> & { id: string | null },
): Promise<PersonalisedMessage> {
  const properties = await findPropertyDefinitions(deps.db, broadcast.team_id);
  const token = deps.unsubscribeLinks.sign({
    teamId: broadcast.team_id,
    contactId: contact.id ?? NO_CONTACT,
    broadcastId: broadcast.id,
  });
  return personaliseBroadcast(messageOf(broadcast), contact, properties, unsubscribeUrl(deps.publicBaseUrl, token));
}

const NO_CONTACT = '00000000-0000-0000-0000-000000000000';

async function requireContact(db: Kysely<SenderDb>, teamId: string, choice: ContactChoice): Promise<ContactRow> {
  const key = 'id' in choice ? (isUuid(choice.id) ? { id: choice.id.toLowerCase() } : undefined) : choice;
  const contact = key ? await findContact(db, teamId, key) : undefined;
  if (!contact) throw notFound('Contact not found');
  return contact;
}
