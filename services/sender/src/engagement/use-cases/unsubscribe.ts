// A broadcast recipient's unsubscribe link, opened without an API key: the token alone names the team and
// the contact. The one-click POST unsubscribes the contact from every broadcast; the preference page shows
// the topics the contact may see and applies its choices. Every change is the contacts' own
// (applySubscriptionChoices: one transaction, contact.updated through the outbox); a GET changes nothing.
import type { Kysely, Transaction } from 'kysely';
import { PUBLIC_LINK_GONE, type UnsubscribeMail } from '@postline/contracts';
import { notFound, type Logger } from '@postline/platform';
import {
  findContact,
  listTopicsOfContact,
  type ContactTopicRow,
  effectiveSubscription,
  applySubscriptionChoices,
} from '../../audience/index.ts';
import type { ContactRow, SenderDb } from '../../db/schema.ts';
import { addMetricDelta } from '../../emails/index.ts';
import { broadcastEmailOf } from '../db/engagements.ts';
import type { PreferenceTopic, Preferences, UnsubscribeRequest } from '../domain/preference-page.ts';
import type { UnsubscribeLink, UnsubscribeSigner } from '../domain/unsubscribe-links.ts';

export type UnsubscribeDeps = { db: Kysely<SenderDb>; now: () => Date; unsubscribeLinks: UnsubscribeSigner };

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** Topics read per query while listing all of a team's for the page. */
const TOPICS_PAGE_SIZE = 100;

/** The link a token names, or 404 (the share links' answer) when it is edited, foreign or malformed. */
export function openUnsubscribeLink(deps: UnsubscribeDeps, token: string): UnsubscribeLink {
  const link = deps.unsubscribeLinks.verify(token);
  if (!link) throw notFound(PUBLIC_LINK_GONE);
  return link;
}

/** The preference page's content for the link's contact (404 once the contact is deleted); reads only. */
export async function readPreferences(deps: UnsubscribeDeps, link: UnsubscribeLink): Promise<Preferences> {
  const contact = await requireContact(deps.db, link);
  const topics = await topicsOfContact(deps.db, link.teamId, contact.id);
  return preferencesOf(contact, topics.filter(visible));
}

/** RFC 8058 one-click: the contact is unsubscribed from every broadcast (contact.updated unless it was). */
export async function unsubscribeOneClick(deps: UnsubscribeDeps, link: UnsubscribeLink): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const contact = await requireContact(trx, link, { forUpdate: true });
    const now = deps.now();
    const updated = await applySubscriptionChoices(trx, now, link.teamId, contact, { unsubscribed: true, topics: [] });
    await countUnsubscribe(trx, link, contact, updated, now);
  });
}

/**
 * A contact the link unsubscribed is counted in the metrics, against the broadcast that carried the link and
 * the sending domain and mailbox provider of the email it came in.
 */
async function countUnsubscribe(
  trx: Transaction<SenderDb>,
  link: UnsubscribeLink,
  before: ContactRow,
  after: ContactRow,
  now: Date,
): Promise<void> {
  if (before.unsubscribed || !after.unsubscribed) return;
  const email = await broadcastEmailOf(trx, link.teamId, link.broadcastId, before.id);
  await addMetricDelta(trx, {
    teamId: link.teamId,
    at: now,
    broadcastId: link.broadcastId,
    domainId: email?.domainId,
    provider: email?.provider,
    metric: 'unsubscribed',
    n: 1,
  });
}

/**
 * The `mailto:` of List-Unsubscribe (RFC 2369), mailed to the team's return-path domain and passed on by
 * the inbound MX: the token is verified as openUnsubscribeLink verifies the link's, and the effect is the
 * one-click's, in the consumer's transaction. A token that does not verify, names another team than the
 * return path's, or a contact since deleted changes nothing: it is logged (never the token, which unlocks
 * the contact's subscriptions) and the message is done with, never retried.
 */
export async function unsubscribeByMail(
  trx: Transaction<SenderDb>,
  deps: { now: () => Date; unsubscribeLinks: UnsubscribeSigner; logger: Logger },
  teamId: string,
  request: UnsubscribeMail,
): Promise<void> {
  const link = deps.unsubscribeLinks.verify(request.token);
  const contact =
    link?.teamId === teamId ? await findContact(trx, teamId, { id: link.contactId }, { forUpdate: true }) : undefined;
  if (!contact) {
    const reason = !link
      ? 'token does not verify'
      : link.teamId !== teamId
        ? "another team's token"
        : 'contact deleted';
    deps.logger.info({ teamId, from: request.from, reason }, 'unsubscribe mail changed nothing');
    return;
  }
  const now = deps.now();
  const updated = await applySubscriptionChoices(trx, now, teamId, contact, { unsubscribed: true, topics: [] });
  if (link) await countUnsubscribe(trx, link, contact, updated, now);
}

/**
 * Applies the page's choices: only topics the contact may see are changed (a private topic it is not opted
 * in to stays out of reach, whatever the form says). The page shown after keeps the topics it showed
 * before, so a private topic just left is still there to be chosen again.
 */
export async function savePreferences(
  deps: UnsubscribeDeps,
  link: UnsubscribeLink,
  request: Extract<UnsubscribeRequest, { kind: 'preferences' }>,
): Promise<Preferences> {
  return deps.db.transaction().execute(async (trx) => {
    const contact = await requireContact(trx, link, { forUpdate: true });
    const shown = new Set((await topicsOfContact(trx, link.teamId, contact.id)).filter(visible).map((t) => t.id));
    const now = deps.now();
    const updated = await applySubscriptionChoices(trx, now, link.teamId, contact, {
      unsubscribed: request.unsubscribed,
      topics: request.topics.filter((choice) => shown.has(choice.id)),
    });
    await countUnsubscribe(trx, link, contact, updated, now);
    const topics = await topicsOfContact(trx, link.teamId, contact.id);
    return preferencesOf(
      updated,
      topics.filter((topic) => shown.has(topic.id) || visible(topic)),
    );
  });
}

async function requireContact(
  db: Db,
  link: UnsubscribeLink,
  options: { forUpdate?: boolean } = {},
): Promise<ContactRow> {
  const contact = await findContact(db, link.teamId, { id: link.contactId }, options);
  if (!contact) throw notFound(PUBLIC_LINK_GONE);
  return contact;
}

/** Every topic of the team, oldest first, with the contact's effective subscription to each. */
async function topicsOfContact(
  db: Db,
  teamId: string,
  contactId: string,
): Promise<(PreferenceTopic & { visibility: string })[]> {
  const rows: ContactTopicRow[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await listTopicsOfContact(db, teamId, contactId, { limit: TOPICS_PAGE_SIZE, after });
    rows.push(...page.data);
    if (!page.has_more) break;
    after = page.data.at(-1)?.id;
  }
  return rows.reverse().map((topic) => ({
    id: topic.id,
    name: topic.name,
    description: topic.description,
    visibility: topic.visibility,
    subscription: effectiveSubscription(topic.subscription ?? undefined, topic.default_subscription),
  }));
}

/** A public topic, or a private one the contact is opted in to. */
function visible(topic: PreferenceTopic & { visibility: string }): boolean {
  return topic.visibility === 'public' || topic.subscription === 'opt_in';
}

function preferencesOf(
  contact: ContactRow,
  topics: readonly (PreferenceTopic & { visibility: string })[],
): Preferences {
  return {
    email: contact.email,
    unsubscribed: contact.unsubscribed,
    topics: topics.map(({ id, name, description, subscription }) => ({ id, name, description, subscription })),
  };
}
