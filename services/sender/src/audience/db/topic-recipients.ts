// Sending under a topic (POST /emails with topic_id): the read that accepting such emails makes first (each
// topic with the explicit choices of the emails' recipients), and the mark on the recipients the topic keeps
// an email from.
import type { Subscription } from '@postline/contracts';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { TopicSubscriptions } from '../domain/topic-sends.ts';
import type { SenderDb } from '../../db/schema.ts';

export type { TopicSubscriptions };

/** Looks up a topic of a team (ids in any case); undefined when the team has no such topic. */
export type TopicLookup = (teamId: string, topicId: string) => TopicSubscriptions | undefined;

/**
 * A question for findTopicSubscriptions: the team's topic, and each recipient with the forms of its address a
 * contact's email may have (compared without case, as contacts are unique per team by lower(email)).
 */
export type TopicQuestion = {
  teamId: string;
  topicId: string;
  recipients: readonly { address: string; forms: readonly string[] }[];
};

/**
 * The topics these questions name, of any number of teams, each with the explicit choices of the recipients
 * that are contacts of its team, in one statement. Not PREPARED: it joins a batch to contacts, which grow,
 * so it is planned for its arrays on every call (a probe of contacts' unique (team_id, email_key) and of
 * contact_topics' primary key per recipient form).
 */
export async function findTopicSubscriptions(
  db: Kysely<SenderDb>,
  questions: readonly TopicQuestion[],
): Promise<TopicLookup> {
  const key = (teamId: string, topicId: string) => `${teamId.toLowerCase()} ${topicId.toLowerCase()}`;
  const topics = new Map<string, { teamId: string; topicId: string }>();
  const forms = new Map<string, { teamId: string; topicId: string; recipient: string; form: string }>();
  for (const question of questions) {
    topics.set(key(question.teamId, question.topicId), question);
    for (const recipient of question.recipients) {
      for (const form of recipient.forms) {
        const entry = { teamId: question.teamId, topicId: question.topicId, recipient: recipient.address, form };
        forms.set(`${key(question.teamId, question.topicId)} ${recipient.address} ${form}`, entry);
      }
    }
  }
  if (topics.size === 0) return () => undefined;
  const pairs = [...topics.values()];
  const asked = [...forms.values()];
  const { rows } = await sql<{
    team_id: string;
    id: string;
    name: string;
    default_subscription: Subscription;
    choices: [string, Subscription][];
  }>`
    select t.team_id, t.id, t.name, t.default_subscription,
      coalesce((select jsonb_agg(jsonb_build_array(r.recipient, ct.subscription))
        from unnest(${asked.map((entry) => entry.teamId)}::uuid[], ${asked.map((entry) => entry.topicId)}::uuid[],
          ${asked.map((entry) => entry.recipient)}::text[], ${asked.map((entry) => entry.form)}::text[])
          as r (team_id, topic_id, recipient, form)
        join contacts c on c.team_id = r.team_id and c.email_key = lower(r.form)
        join contact_topics ct on ct.contact_id = c.id and ct.topic_id = r.topic_id
        where r.team_id = t.team_id and r.topic_id = t.id), '[]'::jsonb) as choices
    from unnest(${pairs.map((pair) => pair.teamId)}::uuid[], ${pairs.map((pair) => pair.topicId)}::uuid[]) as q (team_id, topic_id)
    join topics t on t.team_id = q.team_id and t.id = q.topic_id`.execute(db);
  const found = new Map<string, TopicSubscriptions>();
  for (const row of rows) {
    const choices = new Map<string, Subscription>();
    // Two contacts may be two forms of one address (its domain in Unicode and in punycode): an opt-out wins.
    for (const [recipient, subscription] of row.choices) {
      if (choices.get(recipient) !== 'opt_out') choices.set(recipient, subscription);
    }
    found.set(key(row.team_id, row.id), {
      id: row.id,
      name: row.name,
      defaultSubscription: row.default_subscription,
      choices,
    });
  }
  return (teamId, topicId) => found.get(key(teamId, topicId));
}

/** A recipient a topic keeps its email from, with why (kept as the recipient's last response). */
export type TopicSuppressedRecipient = { emailId: string; position: number; reason: string };

/**
 * Marks just-accepted recipients suppressed, in the transaction of the accept statement (which writes every
 * recipient pending). Not PREPARED, as it joins a batch to recipients (see updateRecipientStates).
 */
export async function markTopicSuppressed(
  trx: Transaction<SenderDb>,
  recipients: readonly TopicSuppressedRecipient[],
  now: Date,
): Promise<void> {
  await sql`update recipients as r set status = 'suppressed', last_response = s.reason, updated_at = ${now}
    from unnest(${recipients.map((recipient) => recipient.emailId)}::uuid[], ${recipients.map((recipient) => recipient.position)}::int[],
      ${recipients.map((recipient) => recipient.reason)}::text[]) as s (email_id, position, reason)
    where r.email_id = s.email_id and r.position = s.position and r.status = 'pending'`.execute(trx);
}
