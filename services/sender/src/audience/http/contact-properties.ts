import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { PaginationQuery } from '@postline/contracts';
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

const PropertyType = z.enum(['string', 'number']);
const FallbackValue = z.union([z.string(), z.number(), z.null()]).optional();
// `type` through z.string() first, so that an absent type is `missing_required_field` (an enum reports it as invalid).
const CreateBody = z.object({ key: z.string(), type: z.string().pipe(PropertyType), fallback_value: FallbackValue });
// Only the fallback value changes; a key or type sent back is checked against the property's own.
const UpdateBody = z.object({
  key: z.string().optional(),
  type: PropertyType.optional(),
  fallback_value: FallbackValue,
});

/** `/contact-properties` as in Resend's API reference: the keys and types of a team's contact properties. */
export function contactPropertyRoutes(deps: ContactPropertyRouteDeps): Router {
  const router = Router();
  route(router, '/contact-properties', {
    post: async (req, res) => {
      const row = await createContactProperty(deps, teamOf(res), parseInput(CreateBody, req.body));
      res.status(201).json({ object: 'contact_property', id: row.id });
    },
    get: async (req, res) => {
      const page = await pageOfContactProperties(deps, teamOf(res), parseInput(PaginationQuery, req.query));
      res.json({ ...page, data: page.data.map(item) });
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
      const row = await changeContactProperty(deps, teamOf(res), req.params.id ?? '', parseInput(UpdateBody, req.body));
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
