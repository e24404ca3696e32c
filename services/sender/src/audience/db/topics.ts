// Topics and contacts' explicit choices of them (a contact without a choice has the topic's default).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { PaginationQuery, Subscription } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import type { SubscriptionChoice } from '../domain/contacts.ts';
import type { SenderDb, TopicRow } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

export type TopicFields = { name: string; description: string | null; visibility: 'public' | 'private' };

/** A topic with a contact's explicit choice of it, if any. */
export type ContactTopicRow = TopicRow & { subscription: Subscription | null };

export async function insertTopic(
  db: Db,
  topic: TopicFields & { id: string; teamId: string; defaultSubscription: Subscription; now: Date },
): Promise<TopicRow> {
  return db
    .insertInto('topics')
    .values({
      id: topic.id,
      team_id: topic.teamId,
      name: topic.name,
      description: topic.description,
      default_subscription: topic.defaultSubscription,
      visibility: topic.visibility,
      created_at: topic.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findTopic(db: Db, teamId: string, id: string): Promise<TopicRow | undefined> {
  return db.selectFrom('topics').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

/** Which of these topic ids the team has. */
export async function findTopicIds(db: Db, teamId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('topics')
    .select('id')
    .where('team_id', '=', teamId)
    .where('id', 'in', ids)
    .execute();
  return rows.map((row) => row.id);
}

export async function listTopics(db: Db, teamId: string, page: PaginationQuery): Promise<Page<TopicRow>> {
  return paginate(db.selectFrom('topics').selectAll().where('team_id', '=', teamId), page);
}

export async function updateTopic(
  db: Db,
  teamId: string,
  id: string,
  fields: Partial<TopicFields>,
): Promise<TopicRow | undefined> {
  if (Object.keys(fields).length === 0) return findTopic(db, teamId, id);
  return db
    .updateTable('topics')
    .set(fields)
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes a topic; contacts' choices of it go with it. */
export async function deleteTopic(db: Db, teamId: string, id: string): Promise<TopicRow | undefined> {
  return db.deleteFrom('topics').where('team_id', '=', teamId).where('id', '=', id).returningAll().executeTakeFirst();
}

/**
 * Records a contact's explicit choices (each topic once); returns how many differ from before (a choice
 * made again is not a change). With `keepMade`, a topic the contact already chose for keeps that choice.
 */
export async function upsertTopicChoices(
  db: Db,
  teamId: string,
  contactId: string,
  choices: readonly SubscriptionChoice[],
  now: Date,
  { keepMade = false }: { keepMade?: boolean } = {},
): Promise<number> {
  if (choices.length === 0) return 0;
  const rows = await db
    .insertInto('contact_topics')
    .values(
      choices.map((choice) => ({
        contact_id: contactId,
        topic_id: choice.id,
        team_id: teamId,
        subscription: choice.subscription,
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      keepMade
        ? oc.columns(['contact_id', 'topic_id']).doNothing()
        : oc
            .columns(['contact_id', 'topic_id'])
            .doUpdateSet({ subscription: (eb) => eb.ref('excluded.subscription'), updated_at: now })
            .where('contact_topics.subscription', '<>', sql<Subscription>`excluded.subscription`),
    )
    .returning('topic_id')
    .execute();
  return rows.length;
}

/**
 * A page of the team's topics, newest first, each with the contact's explicit choice of it: a backward
 * scan of `topics_team_id` (team_id, id), each probing `contact_topics`' primary key.
 */
export async function listTopicsOfContact(
  db: Db,
  teamId: string,
  contactId: string,
  page: PaginationQuery,
): Promise<Page<ContactTopicRow>> {
  const query = db
    .selectFrom('topics')
    .leftJoin('contact_topics', (join) =>
      join.onRef('contact_topics.topic_id', '=', 'topics.id').on('contact_topics.contact_id', '=', contactId),
    )
    .selectAll('topics')
    .select('contact_topics.subscription')
    .where('topics.team_id', '=', teamId);
  return paginate(query, page, { idColumn: 'topics.id' });
}
