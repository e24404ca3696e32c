// Topics: what contacts subscribe to. A topic's default subscription is fixed at creation; a contact's
// explicit choices are changes to the contact and live in use-cases/contacts.ts.
import type { Kysely, Transaction } from 'kysely';
import type { PaginationQuery, Subscription } from '@postline/contracts';
import { isUuid, newId, notFound, type Page } from '@postline/platform';
import { deleteTopic, findTopic, insertTopic, listTopics, updateTopic, type TopicFields } from '../db/topics.ts';
import { topicSizes } from '../db/audience-counts.ts';
import type { SenderDb, TopicRow } from '../../db/schema.ts';
import { checkDefaultSubscription } from '../domain/topics.ts';
import { refusalError } from '../../message/index.ts';

export type TopicDeps = { db: Kysely<SenderDb>; now: () => Date };

/** The team's topic of this id, or 404 (an id that is not a UUID names none). */
export async function requireTopic(
  db: Kysely<SenderDb> | Transaction<SenderDb>,
  teamId: string,
  id: string,
): Promise<TopicRow> {
  const row = isUuid(id) ? await findTopic(db, teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound('Topic not found');
  return row;
}

export async function createTopic(
  deps: TopicDeps,
  teamId: string,
  input: TopicFields & { defaultSubscription: Subscription },
): Promise<TopicRow> {
  return insertTopic(deps.db, { ...input, id: newId(), teamId, now: deps.now() });
}

export async function getTopic(deps: TopicDeps, teamId: string, id: string): Promise<TopicRow> {
  return requireTopic(deps.db, teamId, id);
}

/** A page of the team's topics; with `counts`, each with its contacts by subscription. */
export async function pageOfTopics(
  deps: TopicDeps,
  teamId: string,
  page: PaginationQuery,
  counts = false,
): Promise<Page<TopicRow & { counts?: Record<Subscription, number> }>> {
  const found = await listTopics(deps.db, teamId, page);
  if (!counts) return found;
  const sizes = await topicSizes(deps.db, teamId, found.data);
  return { ...found, data: found.data.map((row) => ({ ...row, counts: sizes.get(row.id) })) };
}

/** Changes a topic's name, description or visibility; a different `default_subscription` is refused. */
export async function changeTopic(
  deps: TopicDeps,
  teamId: string,
  id: string,
  change: Partial<TopicFields> & { defaultSubscription?: Subscription | undefined },
): Promise<TopicRow> {
  const { defaultSubscription, ...fields } = change;
  return deps.db.transaction().execute(async (trx) => {
    const topic = await requireTopic(trx, teamId, id);
    const refusal = checkDefaultSubscription(topic.default_subscription, defaultSubscription);
    if (refusal) throw refusalError(refusal);
    return (await updateTopic(trx, teamId, topic.id, fields)) ?? topic;
  });
}

/** Deletes the team's topic (contacts' choices of it go with it), or 404. */
export async function deleteTeamTopic(deps: TopicDeps, teamId: string, id: string): Promise<TopicRow> {
  const row = isUuid(id) ? await deleteTopic(deps.db, teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound('Topic not found');
  return row;
}
