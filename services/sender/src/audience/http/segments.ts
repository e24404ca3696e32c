import { Router } from 'express';
import type { Kysely } from 'kysely';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import type { SegmentRow, SenderDb } from '../../db/schema.ts';
import { addContactToSegment, pageOfContactSegments, removeContactFromSegment } from '../use-cases/contacts.ts';
import {
  createSegment,
  deleteTeamSegment,
  getSegment,
  pageOfSegments,
  renameTeamSegment,
} from '../use-cases/segments.ts';

export type SegmentRouteDeps = { db: Kysely<SenderDb>; now: () => Date };

/** Segment names: not empty, at most 255 characters (the reference gives no limit). */
const { AudienceCountsQuery, CreateSegmentBody, RenameSegmentBody } = ApiRequests;

const countOf = (row: { contacts_count?: number }) =>
  row.contacts_count === undefined ? {} : { contacts_count: row.contacts_count };

export function segmentRoutes(deps: SegmentRouteDeps): Router {
  const router = Router();
  for (const [path, object] of [
    ['/segments', 'segment'],
    ['/audiences', 'audience'],
  ] as const) {
    route(router, path, {
      post: async (req, res) => {
        const row = await createSegment(deps, teamOf(res), parseInput(CreateSegmentBody, req.body).name);
        res.status(201).json({ object, id: row.id, name: row.name });
      },
      get: async (req, res) => {
        const counts = parseInput(AudienceCountsQuery, { counts: req.query.counts }).counts === 'true';
        const page = await pageOfSegments(deps, teamOf(res), parseInput(PaginationQuery, req.query), counts);
        res.json({ ...page, data: page.data.map((row) => ({ ...item(row), ...countOf(row) })) });
      },
    });
    route(router, `${path}/:id`, {
      get: async (req, res) => {
        res.json({ object, ...item(await getSegment(deps, teamOf(res), req.params.id ?? '')) });
      },
      // PATCH is documented for /segments only; the legacy name answers it too, as the same record.
      patch: async (req, res) => {
        const row = await renameTeamSegment(
          deps,
          teamOf(res),
          req.params.id ?? '',
          parseInput(RenameSegmentBody, req.body).name,
        );
        res.json({ object, id: row.id });
      },
      delete: async (req, res) => {
        await deleteTeamSegment(deps, teamOf(res), req.params.id ?? '');
        res.json({ object, id: req.params.id ?? '', deleted: true });
      },
    });
  }

  route(router, '/contacts/:contact/segments', {
    get: async (req, res) => {
      const page = await pageOfContactSegments(
        deps,
        teamOf(res),
        req.params.contact ?? '',
        parseInput(PaginationQuery, req.query),
      );
      res.json({ ...page, data: page.data.map(item) });
    },
  });
  route(router, '/contacts/:contact/segments/:segment', {
    post: async (req, res) => {
      const { segment } = await addContactToSegment(
        deps,
        teamOf(res),
        req.params.contact ?? '',
        req.params.segment ?? '',
      );
      res.json({ id: segment.id });
    },
    delete: async (req, res) => {
      const { contact, segment } = await removeContactFromSegment(
        deps,
        teamOf(res),
        req.params.contact ?? '',
        req.params.segment ?? '',
      );
      // camelCase `audienceId`, as the reference answers.
      res.json({ object: 'contact_segment', id: contact.id, audienceId: segment.id, deleted: true });
    },
  });
  return router;
}

function item(row: SegmentRow) {
  return { id: row.id, name: row.name, created_at: formatTimestamp(row.created_at) };
}
