import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { PaginationQuery, SuppressionOrigin } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { SenderDb, SuppressionRow } from '../../db/schema.ts';
import { listedAddress } from '../domain/suppressions.ts';
import {
  deleteSuppression,
  getSuppression,
  pageOfSuppressions,
  removeNamedSuppressions,
  suppressAddresses,
} from '../use-cases/suppressions.ts';

export type SuppressionRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

const MAX_BATCH = 100;
// Deliberately plain: the list holds what mail servers refused, so it only has to be a mailbox shape.
const Email = z
  .string()
  .trim()
  .max(320)
  .regex(/^[^\s@<>()[\],;:"\\]+@[^\s@<>()[\],;:"\\]+\.[^\s@<>()[\],;:"\\]+$/, 'must be an email address')
  // As recipients are kept: an internationalised domain in punycode, so `u@bücher.de` matches a send to it.
  .transform(listedAddress);

// The OpenAPI document's schemas of these are checked to be these (tests/openapi/request-schemas.test.ts).
export const AddBody = z.object({ email: Email });
export const BatchAddBody = z.object({ emails: z.array(Email).min(1).max(MAX_BATCH) });
export const BatchRemoveBody = z
  .object({
    emails: z.array(Email).min(1).max(MAX_BATCH).nullish(),
    ids: z.array(z.string()).min(1).max(MAX_BATCH).nullish(),
  })
  .refine((body) => (body.emails ? 1 : 0) + (body.ids ? 1 : 0) === 1, 'Give either `emails` or `ids`.');
export const ListQuery = z.object({ origin: SuppressionOrigin.optional() });

/** `/suppressions` as in Resend's API reference: the team's account-level suppression list. */
export function suppressionRoutes(deps: SuppressionRouteDeps): Router {
  const router = Router();
  route(router, '/suppressions', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const body = parseInput(AddBody, req.body);
      const [row] = await suppressAddresses(deps, teamId, [body.email]);
      res.status(201).json({ object: 'suppression', id: (row as SuppressionRow).id });
    },
    get: async (req, res) => {
      const teamId = teamOf(res);
      const page = parseInput(PaginationQuery, req.query);
      const { origin } = parseInput(ListQuery, { origin: req.query.origin });
      const result = await pageOfSuppressions(deps, teamId, origin, page);
      res.json({ ...result, data: result.data.map(item) });
    },
  });

  route(router, '/suppressions/batch/add', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const body = parseInput(BatchAddBody, req.body);
      const rows = await suppressAddresses(deps, teamId, body.emails);
      res.status(201).json({ data: rows.map((row) => ({ object: 'suppression', id: row.id })) });
    },
  });

  route(router, '/suppressions/batch/remove', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const body = parseInput(BatchRemoveBody, req.body);
      const results = await removeNamedSuppressions(
        deps,
        teamId,
        body.ids ? { ids: body.ids } : { emails: body.emails ?? [] },
      );
      res.json({ data: results.map((result) => ({ object: 'suppression', id: result.id, deleted: result.deleted })) });
    },
  });

  route(router, '/suppressions/:key', {
    get: async (req, res) => {
      const row = await getSuppression(deps, teamOf(res), req.params.key);
      res.json({ object: 'suppression', ...item(row) });
    },
    delete: async (req, res) => {
      const row = await deleteSuppression(deps, teamOf(res), req.params.key);
      res.json({ object: 'suppression', id: row.id, deleted: true });
    },
  });
  return router;
}

function item(row: SuppressionRow) {
  return {
    id: row.id,
    email: row.email,
    origin: row.origin,
    source_id: row.source_id,
    created_at: formatTimestamp(row.created_at),
  };
}
