// Postline's broadcast routes: the team's settings (approval), a broadcast's review before it goes, its
// preview as one contact, test copies, approval and rejection, and its results. Registered before
// `/broadcasts/:id`, so that `/broadcasts/settings` is not read as an id.
import { Router } from 'express';
import { ApiRequests } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf, userOf } from '@postline/platform';
import {
  approveBroadcast,
  changeBroadcastSettings,
  getBroadcastSettings,
  rejectBroadcast,
} from '../use-cases/broadcast-approval.ts';
import { previewOf, sendTestCopies, type PreviewDeps } from '../use-cases/broadcast-preview.ts';
import { resultsOf, reviewOf, type ReviewDeps } from '../use-cases/broadcast-review.ts';

export type BroadcastExtensionDeps = ReviewDeps & PreviewDeps;

const { BroadcastPreviewQuery, BroadcastTestBody, RejectBroadcastBody, UpdateBroadcastSettingsBody } = ApiRequests;

export function broadcastExtensionRoutes(deps: BroadcastExtensionDeps): Router {
  const router = Router();
  route(router, '/broadcasts/settings', {
    get: async (_req, res) => {
      res.json({ object: 'broadcast_settings', ...(await getBroadcastSettings(deps, teamOf(res))) });
    },
    patch: async (req, res) => {
      const body = parseInput(UpdateBroadcastSettingsBody, req.body);
      const settings = await changeBroadcastSettings(deps, teamOf(res), userOf(req), body);
      res.json({ object: 'broadcast_settings', ...settings });
    },
  });
  route(router, '/broadcasts/:id/review', {
    get: async (req, res) => {
      const review = await reviewOf(deps, teamOf(res), req.params.id ?? '');
      res.json({
        object: 'broadcast_review',
        id: review.broadcast.id,
        status: review.broadcast.status,
        can_send: !review.checks.some((check) => check.level === 'error'),
        recipients: review.recipients,
        suppressed: review.suppressed,
        checks: review.checks,
      });
    },
  });
  route(router, '/broadcasts/:id/preview', {
    get: async (req, res) => {
      const query = parseInput(BroadcastPreviewQuery, req.query);
      const choice = query.contact_id !== undefined ? { id: query.contact_id } : { email: query.email ?? '' };
      const { broadcast, contact, message } = await previewOf(deps, teamOf(res), req.params.id ?? '', choice);
      res.json({
        object: 'broadcast_preview',
        id: broadcast.id,
        contact_id: contact.id,
        email: contact.email,
        subject: message.subject,
        html: message.html,
        text: message.text,
      });
    },
  });
  route(router, '/broadcasts/:id/test', {
    post: async (req, res) => {
      const body = parseInput(BroadcastTestBody, req.body);
      const to = Array.isArray(body.to) ? body.to : [body.to];
      const contact = body.contact_id ? { id: body.contact_id } : undefined;
      res.json({ data: await sendTestCopies(deps, teamOf(res), req.params.id ?? '', to, contact) });
    },
  });
  route(router, '/broadcasts/:id/approve', {
    post: async (req, res) => {
      const id = req.params.id ?? '';
      const status = await approveBroadcast(deps, teamOf(res), id, userOf(req));
      res.json({ object: 'broadcast', id, status });
    },
  });
  route(router, '/broadcasts/:id/reject', {
    post: async (req, res) => {
      const id = req.params.id ?? '';
      const body = parseInput(RejectBroadcastBody, req.body);
      await rejectBroadcast(deps, teamOf(res), id, userOf(req), body.reason ?? undefined);
      res.json({ object: 'broadcast', id, status: 'draft' });
    },
  });
  route(router, '/broadcasts/:id/results', {
    get: async (req, res) => {
      const { broadcast, counts } = await resultsOf(deps, teamOf(res), req.params.id ?? '');
      res.json({
        object: 'broadcast_results',
        id: broadcast.id,
        status: broadcast.status,
        sent_at: broadcast.sent_at === null ? null : formatTimestamp(broadcast.sent_at),
        sent: counts.sent,
        delivered: counts.delivered,
        opened: { people: counts.opened_by_people, machines: counts.opened_by_machines },
        clicked: { people: counts.clicked_by_people, scanners: counts.clicked_by_scanners },
        unsubscribed: counts.unsubscribed,
        bounced: counts.bounced,
        complained: counts.complained,
        suppressed: counts.suppressed,
      });
    },
  });
  return router;
}
