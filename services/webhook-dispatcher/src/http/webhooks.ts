import { Router } from 'express';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { formatTimestamp, parseInput, route, teamOf } from '@postline/platform';
import { listEndpoints } from '../db/endpoints.ts';
import { findDeliveriesOfSources, listAttempts, listEvents } from '../db/events.ts';
import type { EndpointRow, EventRow } from '../db/schema.ts';
import {
  createEndpoint,
  ownedEndpoint,
  ownedEvent,
  removeEndpoint,
  replayEvent,
  replayFailedEvents,
  rotateSigningSecret,
  sendTestEvent,
  updateEndpointSettings,
  type WebhookEndpointsDeps,
} from '../use-cases/webhook-endpoints.ts';

export type WebhookRouteDeps = WebhookEndpointsDeps;

const {
  CreateWebhookBody,
  ReplayWebhookEventsBody,
  TestWebhookBody,
  UpdateWebhookBody,
  WebhookAttemptPageQuery,
  WebhookDeliveriesQuery,
  WebhookEventPageQuery,
} = ApiRequests;

/** `/webhooks` as in Resend's API reference: endpoints, their subscribed events and their signing secrets. */
export function webhookRoutes(deps: WebhookRouteDeps): Router {
  const router = Router();
  // Before /webhooks/:id, which would take `deliveries` for an endpoint id.
  route(router, '/webhooks/deliveries', {
    get: async (req, res) => {
      const query = parseInput(WebhookDeliveriesQuery, req.query);
      const rows = await findDeliveriesOfSources(deps.db, teamOf(res), query.source_event_id);
      res.json({
        object: 'list',
        data: rows.map((row) => ({
          id: row.id,
          webhook_id: row.endpoint_id,
          endpoint: row.endpoint,
          source_event_id: row.source_event_id,
          type: row.type,
          status: row.status,
          attempts: row.attempts_made,
          next_attempt_at: row.next_attempt_at ? formatTimestamp(row.next_attempt_at) : null,
          created_at: formatTimestamp(row.created_at),
        })),
      });
    },
  });

  route(router, '/webhooks', {
    post: async (req, res) => {
      const { endpoint, secret } = await createEndpoint(deps, teamOf(res), parseInput(CreateWebhookBody, req.body));
      res.status(201).json({ object: 'webhook', id: endpoint.id, signing_secret: secret });
    },
    get: async (req, res) => {
      const page = await listEndpoints(deps.db, teamOf(res), parseInput(PaginationQuery, req.query));
      res.json({ ...page, data: page.data.map(listItem) });
    },
  });

  route(router, '/webhooks/:id', {
    get: async (req, res) => {
      const endpoint = await ownedEndpoint(deps, teamOf(res), req.params.id);
      // The previous secret's end is shown (the dashboard's dual-signing window) only while it still signs.
      const previousUntil = endpoint.previous_secret_expires_at;
      res.json({
        object: 'webhook',
        ...listItem(endpoint),
        signing_secret: deps.box.open(endpoint.secret_encrypted),
        previous_secret_expires_at:
          previousUntil && previousUntil.getTime() > Date.now() ? formatTimestamp(previousUntil) : null,
      });
    },
    patch: async (req, res) => {
      const endpoint = await ownedEndpoint(deps, teamOf(res), req.params.id);
      await updateEndpointSettings(deps, endpoint, parseInput(UpdateWebhookBody, req.body));
      res.json({ object: 'webhook', id: endpoint.id });
    },
    delete: async (req, res) => {
      const teamId = teamOf(res);
      const endpoint = await ownedEndpoint(deps, teamId, req.params.id);
      await removeEndpoint(deps, teamId, endpoint);
      res.json({ object: 'webhook', id: endpoint.id, deleted: true });
    },
  });

  route(router, '/webhooks/:id/signing-secret/rotate', {
    post: async (req, res) => {
      const endpoint = await ownedEndpoint(deps, teamOf(res), req.params.id);
      const secret = await rotateSigningSecret(deps, endpoint);
      res.json({ object: 'webhook', id: endpoint.id, signing_secret: secret });
    },
  });

  route(router, '/webhooks/:id/events', {
    get: async (req, res) => {
      const endpoint = await ownedEndpoint(deps, teamOf(res), req.params.id);
      const page = await listEvents(deps.db, endpoint.id, parseInput(WebhookEventPageQuery, req.query));
      res.json({
        ...page,
        data: page.data.map((event) => ({
          id: event.id,
          type: event.type,
          created_at: formatTimestamp(event.created_at),
          status: event.status,
          failure_reason: event.failure_reason,
        })),
      });
    },
  });

  // Before /events/:eventId, which would take `replay` for an event id.
  route(router, '/webhooks/:id/events/replay', {
    post: async (req, res) => {
      const endpoint = await ownedEndpoint(deps, teamOf(res), req.params.id);
      const body = parseInput(ReplayWebhookEventsBody, req.body);
      const { replayed, nextSince } = await replayFailedEvents(deps, endpoint, new Date(body.since));
      res.json({ object: 'replay', replayed, next_since: nextSince?.toISOString() ?? null });
    },
  });

  route(router, '/webhooks/:id/test', {
    post: async (req, res) => {
      const endpoint = await ownedEndpoint(deps, teamOf(res), req.params.id);
      const type = parseInput(TestWebhookBody, req.body).type ?? 'email.sent';
      const id = await sendTestEvent(deps, endpoint, type);
      res.status(202).json({ object: 'webhook_event', id, type });
    },
  });

  route(router, '/webhooks/:id/events/:eventId', {
    get: async (req, res) => {
      const event = await ownedEvent(deps, teamOf(res), req.params.id, req.params.eventId);
      res.json(eventBody(event));
    },
  });

  route(router, '/webhooks/:id/events/:eventId/attempts', {
    get: async (req, res) => {
      const event = await ownedEvent(deps, teamOf(res), req.params.id, req.params.eventId);
      const page = await listAttempts(deps.db, event.id, parseInput(WebhookAttemptPageQuery, req.query));
      res.json({
        ...page,
        data: page.data.map((attempt) => ({
          id: attempt.id,
          http_status_code: attempt.http_status_code,
          response: attempt.response,
          sent_at: formatTimestamp(attempt.sent_at),
          ...(attempt.error ? { error: attempt.error } : {}),
          replay: attempt.replay,
        })),
      });
    },
  });

  route(router, '/webhooks/:id/events/:eventId/replay', {
    post: async (req, res) => {
      const event = await ownedEvent(deps, teamOf(res), req.params.id, req.params.eventId);
      await replayEvent(deps, event);
      res.json({ object: 'webhook_event', id: event.id });
    },
  });

  return router;
}

function listItem(endpoint: EndpointRow) {
  return {
    id: endpoint.id,
    endpoint: endpoint.endpoint,
    events: endpoint.events,
    status: endpoint.status,
    created_at: formatTimestamp(endpoint.created_at),
    disabled_reason: endpoint.status === 'disabled' ? endpoint.disabled_reason : null,
    disabled_at: endpoint.status === 'disabled' && endpoint.disabled_at ? formatTimestamp(endpoint.disabled_at) : null,
    disabled_by: endpoint.status === 'disabled' ? endpoint.disabled_by : null,
    failing_since: endpoint.failing_since ? formatTimestamp(endpoint.failing_since) : null,
  };
}

function eventBody(event: EventRow) {
  return {
    object: 'webhook_event',
    id: event.id,
    type: event.type,
    created_at: formatTimestamp(event.created_at),
    status: event.status,
    failure_reason: event.failure_reason,
    next_attempt_at: event.next_attempt_at ? formatTimestamp(event.next_attempt_at) : null,
    attempts: event.attempts_made,
    payload: JSON.parse(event.body) as unknown,
  };
}
