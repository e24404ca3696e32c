import { Router } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { SenderDb, TopicRow } from '../../db/schema.ts';
import { pageOfContactTopics, updateContactTopics } from '../use-cases/contacts.ts';
import { changeTopic, createTopic, deleteTeamTopic, getTopic, pageOfTopics } from '../use-cases/topics.ts';

export type TopicRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

const { AudienceCountsQuery, ContactTopicChoices, ContactTopicChoicesObject, CreateTopicBody, UpdateTopicBody } =
  ApiRequests;

export function topicRoutes(deps: TopicRouteDeps): Router {
  const router = Router();
  route(router, '/topics', {
    post: async (req, res) => {
      const body = parseInput(CreateTopicBody, req.body);
      const row = await createTopic(deps, teamOf(res), {
        name: body.name,
        description: body.description ?? null,
        visibility: body.visibility ?? 'private',
        defaultSubscription: body.default_subscription,
      });
      res.status(201).json({ object: 'topic', id: row.id });
    },
    get: async (req, res) => {
      const counts = parseInput(AudienceCountsQuery, { counts: req.query.counts }).counts === 'true';
      const page = await pageOfTopics(deps, teamOf(res), parseInput(PaginationQuery, req.query), counts);
      res.json({
        ...page,
        data: page.data.map((row) => ({ ...item(row), ...(row.counts && { counts: row.counts }) })),
      });
    },
  });
  route(router, '/topics/:id', {
    get: async (req, res) => {
      res.json({ object: 'topic', ...item(await getTopic(deps, teamOf(res), req.params.id ?? '')) });
    },
    patch: async (req, res) => {
      const body = parseInput(UpdateTopicBody, req.body);
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
        ? parseInput(ContactTopicChoices, req.body)
        : parseInput(ContactTopicChoicesObject, req.body).topics;
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
