import { Router } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { ContactPropertyRow, SenderDb } from '../../db/schema.ts';
import {
  changeContactProperty,
  createContactProperty,
  deleteTeamContactProperty,
  getContactProperty,
  pageOfContactProperties,
} from '../use-cases/contact-properties.ts';

export type ContactPropertyRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

const { AudienceCountsQuery, CreateContactPropertyBody, UpdateContactPropertyBody } = ApiRequests;

export function contactPropertyRoutes(deps: ContactPropertyRouteDeps): Router {
  const router = Router();
  route(router, '/contact-properties', {
    post: async (req, res) => {
      const row = await createContactProperty(deps, teamOf(res), parseInput(CreateContactPropertyBody, req.body));
      res.status(201).json({ object: 'contact_property', id: row.id });
    },
    get: async (req, res) => {
      const counts = parseInput(AudienceCountsQuery, { counts: req.query.counts }).counts === 'true';
      const page = await pageOfContactProperties(deps, teamOf(res), parseInput(PaginationQuery, req.query), counts);
      res.json({
        ...page,
        data: page.data.map((row) => ({
          ...item(row),
          ...(row.contacts_count !== undefined && { contacts_count: row.contacts_count }),
        })),
      });
    },
  });
  route(router, '/contact-properties/:id', {
    get: async (req, res) => {
      res.json({
        object: 'contact_property',
        ...item(await getContactProperty(deps, teamOf(res), req.params.id ?? '')),
      });
    },
    patch: async (req, res) => {
      const row = await changeContactProperty(
        deps,
        teamOf(res),
        req.params.id ?? '',
        parseInput(UpdateContactPropertyBody, req.body),
      );
      res.json({ object: 'contact_property', id: row.id });
    },
    delete: async (req, res) => {
      const row = await deleteTeamContactProperty(deps, teamOf(res), req.params.id ?? '');
      res.json({ object: 'contact_property', id: row.id, deleted: true });
    },
  });
  return router;
}

function item(row: ContactPropertyRow) {
  return {
    id: row.id,
    key: row.key,
    type: row.type,
    fallback_value: row.fallback_value ?? null,
    created_at: formatTimestamp(row.created_at),
  };
}
