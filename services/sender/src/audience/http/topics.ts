import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { PaginationQuery } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { SenderDb, TopicRow } from '../../db/schema.ts';
import { TOPIC_DESCRIPTION_MAX, TOPIC_NAME_MAX } from '../domain/topics.ts';
import { pageOfContactTopics, updateContactTopics } from '../use-cases/contacts.ts';
import { changeTopic, createTopic, deleteTeamTopic, getTopic, pageOfTopics } from '../use-cases/topics.ts';

export type TopicRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

const Subscription = z.enum(['opt_in', 'opt_out']);
const Visibility = z.enum(['public', 'private']);
const Name = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(TOPIC_NAME_MAX, `must be at most ${TOPIC_NAME_MAX} characters`);
const Description = z
  .string()
  .max(TOPIC_DESCRIPTION_MAX, `must be at most ${TOPIC_DESCRIPTION_MAX} characters`)
  .nullish();
const CreateBody = z.object({
  name: Name,
  // Through z.string() first, so that an absent value is `missing_required_field` (an enum reports it as invalid).
  default_subscription: z.string().pipe(Subscription),
  description: Description,
  visibility: Visibility.nullish(),
});
// Clients send the whole record back (the SDK sends `id` in the body): other keys are ignored, and
// `default_subscription` is refused only when it would change.
const UpdateBody = z.object({
  name: Name.optional(),
  description: Description,
  visibility: Visibility.optional(),
  default_subscription: Subscription.optional(),
});
const Choices = z.array(z.object({ id: z.string(), subscription: Subscription }));
const ChoicesObject = z.object({ topics: Choices });

/** `/topics` as in Resend's API reference, and a contact's subscriptions (`/contacts/{id_or_email}/topics`). */
export function topicRoutes(deps: TopicRouteDeps): Router {
  const router = Router();
  route(router, '/topics', {
    post: async (req, res) => {
      const body = parseInput(CreateBody, req.body);
      const row = await createTopic(deps, teamOf(res), {
        name: body.name,
        description: body.description ?? null,
        visibility: body.visibility ?? 'private',
        defaultSubscription: body.default_subscription,
      });
      res.status(201).json({ object: 'topic', id: row.id });
    },
    get: async (req, res) => {
      const page = await pageOfTopics(deps, teamOf(res), parseInput(PaginationQuery, req.query));
      res.json({ ...page, data: page.data.map(item) });
    },
  });
  route(router, '/topics/:id', {
    get: async (req, res) => {
      res.json({ object: 'topic', ...item(await getTopic(deps, teamOf(res), req.params.id ?? '')) });
    },
    patch: async (req, res) => {
      const body = parseInput(UpdateBody, req.body);
      const row = await changeTopic(deps, teamOf(res), req.params.id ?? '', {
        ...(body.name === undefined ? {} : { name: body.name }),
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.visibility === undefined ? {} : { visibility: body.visibility }),
        defaultSubscription: body.default_subscription,
      });
      res.json({ object: 'topic', id: row.id });
    },
    delete: async (req, res) => {
      const row = await deleteTeamTopic(deps, teamOf(res), req.params.id ?? '');
      res.json({ object: 'topic', id: row.id, deleted: true });
    },
  });

  route(router, '/contacts/:contact/topics', {
    get: async (req, res) => {
      res.json(
        await pageOfContactTopics(deps, teamOf(res), req.params.contact ?? '', parseInput(PaginationQuery, req.query)),
      );
    },
    patch: async (req, res) => {
      // The SDK sends a bare array; the OpenAPI file and the docs' parameter table say `{topics: [...]}`.
      const choices = Array.isArray(req.body)
        ? parseInput(Choices, req.body)
        : parseInput(ChoicesObject, req.body).topics;
      const contact = await updateContactTopics(deps, teamOf(res), req.params.contact ?? '', choices);
      res.json({ object: 'contact_topics', id: contact.id });
    },
  });
  return router;
}

function item(row: TopicRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    default_subscription: row.default_subscription,
    visibility: row.visibility,
    created_at: formatTimestamp(row.created_at),
  };
}
