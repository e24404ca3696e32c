import { Router } from 'express';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { PaginationQuery, PublicEventType, type PublicEventType as EventType } from '@postline/contracts';
import { ApiError, enqueueCommand, formatTimestamp, isUuid, newId, notFound, parseInput, route, teamOf, type SecretBox } from '@postline/platform';
import { deleteEndpoint, findEndpoint, insertEndpoint, listEndpoints, updateEndpoint } from '../db/endpoints.ts';
import { findEvent, listAttempts, listEvents } from '../db/events.ts';
import type { DispatcherDb, EndpointRow, EventRow } from '../db/schema.ts';
import { checkEndpointUrl } from '../delivery/url-policy.ts';
import { isEventId } from '../domain/ids.ts';
import { ROTATION_OVERLAP_S } from '../domain/schedule.ts';
import { newSecret } from '../domain/signing.ts';

export type WebhookRouteDeps = {
  db: Kysely<DispatcherDb>;
  box: SecretBox;
  /** ALLOW_PRIVATE_NETWORK_TARGETS: http:// and private addresses allowed (development and tests). */
  allowPrivate: boolean;
  /** POSTLINE_DELAY_SCALE. */
  scale: number;
};

const Events = z.array(z.string(), { message: 'The `events` field must be an array of event names.' });

const CreateWebhook = z.object({ endpoint: z.string(), events: Events });
const UpdateWebhook = z.object({
  endpoint: z.string().nullish(),
  events: Events.nullish(),
  status: z.enum(['enabled', 'disabled'], { message: 'must be "enabled" or "disabled"' }).nullish(),
});

/** Event and attempt lists page forward only, with `after`: the id of an event (`msg_`) or attempt (`atmpt_`). */
function forwardPage(prefix: 'msg' | 'atmpt') {
  return z.object({
    limit: PaginationQuery.shape.limit,
    after: z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{32}$`), 'The cursor must be a valid id.').optional(),
  });
}
const EventPage = forwardPage('msg');
const AttemptPage = forwardPage('atmpt');

/** `/webhooks` as in API-REFERENCE.md §8 and SPEC.md §6. */
export function webhookRoutes(deps: WebhookRouteDeps): Router {
  const router = Router();

  route(router, '/webhooks', {
    post: async (req, res) => {
      const teamId = teamOf(res);
      const body = parseInput(CreateWebhook, req.body);
      const endpoint = endpointUrl(body.endpoint, deps.allowPrivate);
      const events = eventNames(body.events);
      const secret = newSecret();
      const row = await insertEndpoint(deps.db, {
        id: newId(),
        team_id: teamId,
        endpoint,
        events,
        status: 'enabled',
        secret_encrypted: deps.box.seal(secret),
      });
      res.status(201).json({ object: 'webhook', id: row.id, signing_secret: secret });
    },
    get: async (req, res) => {
      const page = await listEndpoints(deps.db, teamOf(res), parseInput(PaginationQuery, req.query));
      res.json({ ...page, data: page.data.map(listItem) });
    },
  });

  route(router, '/webhooks/:id', {
    get: async (req, res) => {
      const endpoint = await owned(deps, teamOf(res), req.params.id);
      res.json({ object: 'webhook', ...listItem(endpoint), signing_secret: deps.box.open(endpoint.secret_encrypted) });
    },
    patch: async (req, res) => {
      const teamId = teamOf(res);
      const endpoint = await owned(deps, teamId, req.params.id);
      const body = parseInput(UpdateWebhook, req.body);
      const status = body.status ?? undefined;
      await updateEndpoint(deps.db, endpoint.id, {
        ...(typeof body.endpoint === 'string' ? { endpoint: endpointUrl(body.endpoint, deps.allowPrivate) } : {}),
        ...(Array.isArray(body.events) ? { events: eventNames(body.events) } : {}),
        ...(status ? { status } : {}),
        // Enabled again by hand: the failure streak starts over.
        ...(status === 'enabled' ? { failing_since: null, disabled_reason: null } : {}),
        ...(status === 'disabled' ? { disabled_reason: 'disabled through the API' } : {}),
      });
      res.json({ object: 'webhook', id: endpoint.id });
    },
    delete: async (req, res) => {
      const teamId = teamOf(res);
      const endpoint = await owned(deps, teamId, req.params.id);
      await deleteEndpoint(deps.db, teamId, endpoint.id);
      res.json({ object: 'webhook', id: endpoint.id, deleted: true });
    },
  });

  route(router, '/webhooks/:id/signing-secret/rotate', {
    post: async (req, res) => {
      const endpoint = await owned(deps, teamOf(res), req.params.id);
      const secret = newSecret();
      await updateEndpoint(deps.db, endpoint.id, {
        secret_encrypted: deps.box.seal(secret),
        previous_secret_encrypted: endpoint.secret_encrypted,
        previous_secret_expires_at: new Date(Date.now() + ROTATION_OVERLAP_S * 1000 * deps.scale),
      });
      res.json({ object: 'webhook', id: endpoint.id, signing_secret: secret });
    },
  });

  route(router, '/webhooks/:id/events', {
    get: async (req, res) => {
      const endpoint = await owned(deps, teamOf(res), req.params.id);
      const page = await listEvents(deps.db, endpoint.id, parseInput(EventPage, req.query));
      res.json({
        ...page,
        data: page.data.map((e) => ({ id: e.id, type: e.type, created_at: formatTimestamp(e.created_at), status: e.status })),
      });
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
      const page = await listAttempts(deps.db, event.id, parseInput(AttemptPage, req.query));
      res.json({
        ...page,
        data: page.data.map((a) => ({
          id: a.id,
          http_status_code: a.http_status_code,
          response: a.response,
          sent_at: formatTimestamp(a.sent_at),
          ...(a.error ? { error: a.error } : {}),
          replay: a.replay,
        })),
      });
    },
  });

  route(router, '/webhooks/:id/events/:eventId/replay', {
    // One extra delivery at once with the same webhook-id; the retry schedule is not touched.
    post: async (req, res) => {
      const event = await ownedEvent(deps, teamOf(res), req.params.id, req.params.eventId);
      await deps.db.transaction().execute((trx) =>
        enqueueCommand(trx, 'webhook-dispatcher.deliver', event.team_id, { event_id: event.id, attempt: null, replay: true }),
      );
      res.json({ object: 'webhook_event', id: event.id });
    },
  });

  return router;
}

// Another team's endpoint and a malformed id look the same: not found.
async function owned(deps: WebhookRouteDeps, teamId: string, id: string | undefined): Promise<EndpointRow> {
  const endpoint = id && isUuid(id) ? await findEndpoint(deps.db, teamId, id) : undefined;
  if (!endpoint) throw notFound('Webhook not found');
  return endpoint;
}

async function ownedEvent(deps: WebhookRouteDeps, teamId: string, id: string | undefined, eventId: string | undefined): Promise<EventRow> {
  const endpoint = await owned(deps, teamId, id);
  const event = eventId && isEventId(eventId) ? await findEvent(deps.db, endpoint.id, eventId) : undefined;
  if (!event) throw notFound('Webhook event not found');
  return event;
}

function endpointUrl(raw: string, allowPrivate: boolean): string {
  const checked = checkEndpointUrl(raw, { allowPrivate });
  if (!checked.ok) throw new ApiError(422, 'validation_error', checked.message);
  return checked.url.toString();
}

/** Every name must be one of the 19 public events; an unknown one refuses the save, naming it. */
function eventNames(names: string[]): EventType[] {
  if (names.length === 0) throw new ApiError(422, 'validation_error', 'The `events` field must list at least one event.');
  const unknown = names.filter((n) => !PublicEventType.safeParse(n).success);
  if (unknown.length > 0) {
    throw new ApiError(422, 'validation_error', `Unknown event name${unknown.length > 1 ? 's' : ''}: ${unknown.map((n) => `\`${n}\``).join(', ')}.`);
  }
  return [...new Set(names)] as EventType[];
}

function listItem(endpoint: EndpointRow) {
  return {
    id: endpoint.id,
    endpoint: endpoint.endpoint,
    events: endpoint.events,
    status: endpoint.status,
    created_at: formatTimestamp(endpoint.created_at),
  };
}

function eventBody(event: EventRow) {
  return {
    object: 'webhook_event',
    id: event.id,
    type: event.type,
    created_at: formatTimestamp(event.created_at),
    status: event.status,
    next_attempt_at: event.next_attempt_at ? formatTimestamp(event.next_attempt_at) : null,
    attempts: event.attempts_made,
    payload: JSON.parse(event.body) as unknown,
  };
}
