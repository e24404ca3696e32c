import { Router, type RequestHandler } from 'express';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { ApiError, formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { ContactListRow } from '../db/contacts.ts';
import type { SenderDb } from '../../db/schema.ts';
import {
  addAudienceContact,
  createContact,
  deleteTeamContact,
  getContact,
  pageOfContacts,
  removeAudienceContact,
  updateContact,
  type ContactInput,
  type ContactWithProperties,
} from '../use-cases/contacts.ts';

export type ContactRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

// `properties` is checked against the team's contact properties by the use case, naming the key.
const { AudienceContactBody, ContactListQuery, CreateContactBody, UpdateContactBody } = ApiRequests;

export function contactRoutes(deps: ContactRouteDeps): Router {
  const router = Router();
  route(router, '/contacts', {
    post: async (req, res) => {
      const body = parseInput(CreateContactBody, req.body);
      const contact = await createContact(deps, teamOf(res), {
        ...input(body),
        email: body.email,
        segmentIds: body.segments ?? [],
        topics: body.topics ?? [],
        audienceId: body.audience_id ?? undefined,
      });
      res.status(201).json({ object: 'contact', id: contact.id });
    },
    get: async (req, res) => {
      const query = parseInput(ContactListQuery, {
        segment_id: req.query.segment_id,
        q: req.query.q,
        unsubscribed: req.query.unsubscribed,
        topic_id: req.query.topic_id,
        topic_subscription: req.query.topic_subscription,
      });
      if (query.topic_subscription !== undefined && query.topic_id === undefined) {
        throw new ApiError(422, 'validation_error', '`topic_subscription` needs `topic_id`.');
      }
      const filter = {
        q: query.q,
        unsubscribed: query.unsubscribed === undefined ? undefined : query.unsubscribed === 'true',
        topic:
          query.topic_id === undefined ? undefined : { id: query.topic_id, subscription: query.topic_subscription },
      };
      const page = await pageOfContacts(
        deps,
        teamOf(res),
        query.segment_id,
        parseInput(PaginationQuery, req.query),
        filter,
      );
      res.json({ ...page, data: page.data.map(listItem) });
    },
  });
  route(router, '/contacts/:contact', {
    get: async (req, res) => {
      res.json(fullItem(await getContact(deps, teamOf(res), req.params.contact ?? '')));
    },
    patch: async (req, res) => {
      const contact = await updateContact(
        deps,
        teamOf(res),
        req.params.contact ?? '',
        input(parseInput(UpdateContactBody, req.body)),
      );
      res.json({ object: 'contact', id: contact.id });
    },
    delete: async (req, res) => {
      await deleteTeamContact(deps, teamOf(res), req.params.contact ?? '');
      // The reference names the contact as the request did (id or email), under `contact`.
      res.json({ object: 'contact', contact: req.params.contact ?? '', deleted: true });
    },
  });

  const segmentContacts: RequestHandler = async (req, res) => {
    const page = await pageOfContacts(
      deps,
      teamOf(res),
      req.params.segment ?? '',
      parseInput(PaginationQuery, req.query),
    );
    res.json({ ...page, data: page.data.map(listItem) });
  };
  route(router, '/segments/:segment/contacts', { get: segmentContacts });
  route(router, '/audiences/:segment/contacts', {
    get: segmentContacts,
    post: async (req, res) => {
      const body = parseInput(AudienceContactBody, req.body);
      const contact = await addAudienceContact(deps, teamOf(res), req.params.segment ?? '', {
        ...input(body),
        email: body.email,
      });
      res.status(201).json({ object: 'contact', id: contact.id });
    },
  });
  route(router, '/audiences/:segment/contacts/:contact', {
    get: async (req, res) => {
      res.json(fullItem(await getContact(deps, teamOf(res), req.params.contact ?? '', req.params.segment ?? '')));
    },
    patch: async (req, res) => {
      const contact = await updateContact(
        deps,
        teamOf(res),
        req.params.contact ?? '',
        input(parseInput(UpdateContactBody, req.body)),
        req.params.segment ?? '',
      );
      res.json({ object: 'contact', id: contact.id });
    },
    delete: async (req, res) => {
      await removeAudienceContact(deps, teamOf(res), req.params.segment ?? '', req.params.contact ?? '');
      res.json({ object: 'contact', contact: req.params.contact ?? '', deleted: true });
    },
  });
  return router;
}

/** A body's contact fields; a `null` email or `unsubscribed` is as if absent, a `null` name clears it. */
function input(body: z.infer<typeof UpdateContactBody>): ContactInput {
  return {
    email: body.email ?? undefined,
    first_name: body.first_name,
    last_name: body.last_name,
    unsubscribed: body.unsubscribed ?? undefined,
    properties: body.properties,
  };
}

function listItem(row: ContactListRow) {
  return {
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    created_at: formatTimestamp(row.created_at),
    unsubscribed: row.unsubscribed,
  };
}

function fullItem({ contact, properties }: ContactWithProperties) {
  return { object: 'contact', ...listItem(contact), properties };
}
