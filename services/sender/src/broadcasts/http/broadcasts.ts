import { createHash } from 'node:crypto';
import { Router } from 'express';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { ApiRequests, DEFAULT_PAGE_SIZE, PaginationQuery } from '@postline/contracts';
import { ApiError, formatTimestamp, parseInput, route, teamOf, userOf } from '@postline/platform';
import type { BroadcastRow, SenderDb } from '../../db/schema.ts';
import { pageOfList } from '../domain/list-page.ts';
import { broadcastExtensionRoutes, type BroadcastExtensionDeps } from './broadcast-review.ts';
import {
  broadcastClickedLinks,
  cancelBroadcast,
  changeBroadcast,
  createBroadcast,
  getBroadcast,
  pageOfBroadcastRecipients,
  pageOfBroadcasts,
  removeBroadcast,
  sendBroadcast,
  type BroadcastInput,
  type BroadcastRecipientItem,
} from '../use-cases/broadcasts.ts';

/** `devInbox`: DEV_INBOX is on (an added domain may broadcast before it is verified). */
export type BroadcastRouteDeps = { db: Kysely<SenderDb>; now: () => Date; devInbox?: boolean } & BroadcastExtensionDeps;

// `null` is accepted everywhere, as the SDKs send it: on a field that can be cleared it clears it,
// elsewhere it means absent. Unknown keys are ignored.
const {
  BroadcastClickedLinksQuery,
  BroadcastListQuery,
  BroadcastRecipientsQuery,
  CreateBroadcastBody,
  SendBroadcastBody,
  UpdateBroadcastBody,
} = ApiRequests;
const BounceTypes = { permanent: 'Permanent', transient: 'Transient', undetermined: 'Undetermined' } as const;

/** `/broadcasts` as in Resend's API reference. */
export function broadcastRoutes(deps: BroadcastRouteDeps): Router {
  const router = Router();
  router.use(broadcastExtensionRoutes(deps));
  route(router, '/broadcasts', {
    post: async (req, res) => {
      const body = parseInput(CreateBroadcastBody, req.body);
      const id = await createBroadcast(
        deps,
        teamOf(res),
        { ...inputOf(body), send: body.send === true, scheduledAt: body.scheduled_at ?? undefined },
        userOf(req),
      );
      res.status(201).json({ object: 'broadcast', id });
    },
    get: async (req, res) => {
      const { status } = parseInput(BroadcastListQuery, { status: req.query.status });
      const page = await pageOfBroadcasts(deps, teamOf(res), parseInput(PaginationQuery, req.query), status);
      res.json({ ...page, data: page.data.map(listItem) });
    },
  });
  route(router, '/broadcasts/:id', {
    get: async (req, res) => {
      res.json(fullItem(await getBroadcast(deps, teamOf(res), req.params.id ?? '')));
    },
    patch: async (req, res) => {
      const id = req.params.id ?? '';
      await changeBroadcast(deps, teamOf(res), id, inputOf(parseInput(UpdateBroadcastBody, req.body)), userOf(req));
      res.json({ object: 'broadcast', id });
    },
    delete: async (req, res) => {
      const id = req.params.id ?? '';
      await removeBroadcast(deps, teamOf(res), id);
      res.json({ object: 'broadcast', id, deleted: true });
    },
  });
  route(router, '/broadcasts/:id/send', {
    post: async (req, res) => {
      const id = req.params.id ?? '';
      const scheduledAt = parseInput(SendBroadcastBody, req.body).scheduled_at ?? undefined;
      await sendBroadcast(deps, teamOf(res), id, scheduledAt, userOf(req));
      res.json({ id });
    },
  });
  route(router, '/broadcasts/:id/cancel', {
    post: async (req, res) => {
      const id = req.params.id ?? '';
      await cancelBroadcast(deps, teamOf(res), id);
      res.json({ object: 'broadcast', id });
    },
  });
  route(router, '/broadcasts/:id/recipients', {
    get: async (req, res) => {
      if (req.query.type === undefined) {
        throw new ApiError(422, 'missing_required_parameter', 'Missing `type` parameter.');
      }
      const filter = parseInput(BroadcastRecipientsQuery, req.query);
      const page = await pageOfBroadcastRecipients(
        deps,
        teamOf(res),
        req.params.id ?? '',
        {
          type: filter.type,
          email: filter.email,
          bounceType: filter.bounce_type === undefined ? undefined : BounceTypes[filter.bounce_type],
        },
        parseInput(PaginationQuery, paginationOf(req.query)),
      );
      res.json({ ...page, data: page.data.map((item) => recipientItem(item, filter.type)) });
    },
  });
  route(router, '/broadcasts/:id/clicked-links', {
    get: async (req, res) => {
      // The links are read whole (a broadcast's distinct links are few) and paged here; id is the URL's hash.
      const query = parseInput(BroadcastClickedLinksQuery, paginationOf(req.query));
      const links = await broadcastClickedLinks(deps, teamOf(res), req.params.id ?? '');
      const page = pageOfList(
        links.map((link) => ({ id: createHash('sha256').update(link.url).digest('hex').slice(0, 32), ...link })),
        query,
        DEFAULT_PAGE_SIZE,
      );
      res.json({ object: 'list', has_more: page.hasMore, data: page.data });
    },
  });
  return router;
}

function inputOf(body: z.infer<typeof UpdateBroadcastBody>): BroadcastInput {
  const segment = body.segment_id ?? body.audience_id ?? undefined;
  const replyTo = body.reply_to ?? undefined;
  return {
    name: body.name,
    segmentId: segment,
    from: body.from ?? undefined,
    subject: body.subject ?? undefined,
    replyTo: replyTo === undefined ? undefined : Array.isArray(replyTo) ? replyTo : [replyTo],
    previewText: body.preview_text,
    html: body.html,
    text: body.text,
    topicId: body.topic_id,
  };
}

function paginationOf(query: Record<string, unknown>): Record<string, unknown> {
  const { limit, after, before } = query;
  return { limit, after, before };
}

function listItem(row: BroadcastRow) {
  return {
    id: row.id,
    name: row.name,
    audience_id: row.segment_id,
    segment_id: row.segment_id,
    status: row.status,
    created_at: formatTimestamp(row.created_at),
    scheduled_at: row.scheduled_at === null ? null : formatTimestamp(row.scheduled_at),
    sent_at: row.sent_at === null ? null : formatTimestamp(row.sent_at),
    topic_id: row.topic_id,
  };
}

function fullItem(row: BroadcastRow) {
  return {
    object: 'broadcast',
    id: row.id,
    name: row.name,
    audience_id: row.segment_id,
    segment_id: row.segment_id,
    from: row.from_header,
    subject: row.subject,
    reply_to: row.reply_to.length === 0 ? null : row.reply_to,
    preview_text: row.preview_text,
    status: row.status,
    created_at: formatTimestamp(row.created_at),
    scheduled_at: row.scheduled_at === null ? null : formatTimestamp(row.scheduled_at),
    sent_at: row.sent_at === null ? null : formatTimestamp(row.sent_at),
    html: row.html,
    text: row.text,
    topic_id: row.topic_id,
    approval:
      row.status === 'awaiting_approval' && row.approval_requested_at !== null
        ? {
            requested_by: row.approval_requested_by,
            requested_at: formatTimestamp(row.approval_requested_at),
            scheduled_at: row.approval_scheduled_at === null ? null : formatTimestamp(row.approval_scheduled_at),
          }
        : null,
    rejection:
      row.rejected_at === null
        ? null
        : { rejected_by: row.rejected_by, rejected_at: formatTimestamp(row.rejected_at), reason: row.rejection_reason },
  };
}

function recipientItem(item: BroadcastRecipientItem, type: z.infer<typeof ApiRequests.BroadcastRecipientType>) {
  const base = { id: item.id, contact_id: item.contact_id, email: item.email };
  if (type === 'bounced') return { ...base, bounce_type: (item.bounce_type ?? 'Undetermined').toLowerCase() };
  if (type === 'opened') return { ...base, count: item.count ?? 0 };
  if (type === 'clicked') return { ...base, count: item.count ?? 0, clicked_links: item.clicked_links ?? [] };
  return base;
}
