// How many contacts each segment, topic and contact property holds: the counts the lists show with
// `counts=true`, read for one page of records at a time.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Subscription } from '@postline/contracts';
import type { SenderDb } from '../../db/schema.ts';

type Db = Kysely<SenderDb> | Transaction<SenderDb>;

/** Each segment's members, from the segment's side of `contact_segments` (an index-only count). */
export async function segmentSizes(db: Db, teamId: string, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<{ segment_id: string; n: number }>`
    select segment_id, count(*)::int as n from contact_segments
    where segment_id = any(${ids}::uuid[]) and team_id = ${teamId} group by segment_id`.execute(db);
  return new Map(ids.map((id) => [id, rows.find((row) => row.segment_id === id)?.n ?? 0]));
}

/**
 * Each topic's contacts by their subscription. A contact without a choice holds the topic's default, so
 * the count of the other value is its choice rows and the default's is the rest of the team.
 */
export async function topicSizes(
  db: Db,
  teamId: string,
  topics: readonly { id: string; default_subscription: Subscription }[],
): Promise<Map<string, Record<Subscription, number>>> {
  if (topics.length === 0) return new Map();
  const [total, choices] = await Promise.all([
    sql<{ n: number }>`select count(*)::int as n from contacts where team_id = ${teamId}`.execute(db),
    sql<{ topic_id: string; subscription: Subscription; n: number }>`
      select topic_id, subscription, count(*)::int as n from contact_topics
      where topic_id = any(${topics.map((topic) => topic.id)}::uuid[]) and team_id = ${teamId}
      group by topic_id, subscription`.execute(db),
  ]);
  const all = total.rows[0]?.n ?? 0;
  return new Map(
    topics.map((topic) => {
      const other: Subscription = topic.default_subscription === 'opt_in' ? 'opt_out' : 'opt_in';
      const chose = choices.rows.find((row) => row.topic_id === topic.id && row.subscription === other)?.n ?? 0;
      const counts = { [other]: chose, [topic.default_subscription]: all - chose } as Record<Subscription, number>;
      return [topic.id, counts];
    }),
  );
}

/**
 * How many of the team's contacts have a value for each property (by id): one pass over the team, a count
 * per property (expanding each contact's properties instead costs several times as much).
 */
export async function propertyUses(db: Db, teamId: string, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const counts = ids.map(
    (id, i) => sql`count(*) filter (where c.properties -> ${id}::text <> 'null'::jsonb)::int as ${sql.ref(`n${i}`)}`,
  );
  const { rows } = await sql<Record<string, number>>`
    select ${sql.join(counts)} from contacts c where c.team_id = ${teamId}`.execute(db);
  return new Map(ids.map((id, i) => [id, rows[0]?.[`n${i}`] ?? 0]));
}
