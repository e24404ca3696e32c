// Webhook endpoints behind /webhooks: saving them (URL and event names checked), rotating their signing
// secret, replaying one of their events or every failed one since a time, and sending them a test event. Another team's endpoint and a malformed id look the same: not
// found.
import type { Kysely } from 'kysely';
import { ApiRequests, PublicEventType } from '@postline/contracts';
import { enqueue, enqueueCommand, isUuid, newId, notFound, validationError, type SecretBox } from '@postline/platform';
import { deleteEndpoint, findEndpoint, insertEndpoint, updateEndpoint } from '../db/endpoints.ts';
import { failedEventsSince, findEvent, insertTestEvent } from '../db/events.ts';
import type { DispatcherDb, EndpointRow, EventRow } from '../db/schema.ts';
import { eventIdFor, isEventId } from '../domain/ids.ts';
import { sampleEventData } from '../domain/sample-events.ts';
import { ROTATION_OVERLAP_S } from '../domain/schedule.ts';
import { newSecret } from '../domain/signing.ts';
import { checkEndpointUrl } from '../webhook-http/url-policy.ts';

export type WebhookEndpointsDeps = {
  db: Kysely<DispatcherDb>;
  box: SecretBox;
  /** ALLOW_PRIVATE_NETWORK_TARGETS: http:// and private addresses allowed (development and tests). */
  allowPrivate: boolean;
  /** POSTLINE_DELAY_SCALE. */
  scale: number;
};

/** A new endpoint with its own `whsec_` secret; the secret is returned in the clear this once. */
export async function createEndpoint(
  deps: WebhookEndpointsDeps,
  teamId: string,
  input: { endpoint: string; events: string[] },
): Promise<{ endpoint: EndpointRow; secret: string }> {
  const url = endpointUrl(input.endpoint, deps.allowPrivate);
  const events = eventNames(input.events);
  const secret = newSecret();
  const endpoint = await insertEndpoint(deps.db, {
    id: newId(),
    team_id: teamId,
    endpoint: url,
    events,
    status: 'enabled',
    secret_encrypted: deps.box.seal(secret),
  });
  return { endpoint, secret };
}

export async function ownedEndpoint(
  deps: Pick<WebhookEndpointsDeps, 'db'>,
  teamId: string,
  id: string | undefined,
): Promise<EndpointRow> {
  const endpoint = id && isUuid(id) ? await findEndpoint(deps.db, teamId, id) : undefined;
  if (!endpoint) throw notFound('Webhook not found');
  return endpoint;
}

export async function ownedEvent(
  deps: Pick<WebhookEndpointsDeps, 'db'>,
  teamId: string,
  id: string | undefined,
  eventId: string | undefined,
): Promise<EventRow> {
  const endpoint = await ownedEndpoint(deps, teamId, id);
  const event = eventId && isEventId(eventId) ? await findEvent(deps.db, endpoint.id, eventId) : undefined;
  if (!event) throw notFound('Webhook event not found');
  return event;
}

/**
 * Changes what is given (null: not given). Enabled again by hand, the failure streak starts over (the events
 * recorded failed meanwhile stay failed, for a bulk replay). Disabled through the API, no events are recorded
 * for it until it is enabled again; asking to disable an endpoint already disabled changes nothing.
 */
export async function updateEndpointSettings(
  deps: WebhookEndpointsDeps,
  endpoint: EndpointRow,
  patch: { endpoint?: string | null; events?: string[] | null; status?: 'enabled' | 'disabled' | null },
): Promise<void> {
  const status = patch.status !== endpoint.status ? (patch.status ?? undefined) : undefined;
  await updateEndpoint(deps.db, endpoint.id, {
    ...(typeof patch.endpoint === 'string' ? { endpoint: endpointUrl(patch.endpoint, deps.allowPrivate) } : {}),
    ...(Array.isArray(patch.events) ? { events: eventNames(patch.events) } : {}),
    ...(status === 'enabled'
      ? { status, failing_since: null, disabled_reason: null, disabled_at: null, disabled_by: null }
      : {}),
    ...(status === 'disabled'
      ? { status, disabled_reason: 'disabled through the API', disabled_at: new Date(), disabled_by: 'api' as const }
      : {}),
  });
}

export async function removeEndpoint(
  deps: Pick<WebhookEndpointsDeps, 'db'>,
  teamId: string,
  endpoint: EndpointRow,
): Promise<void> {
  await deleteEndpoint(deps.db, teamId, endpoint.id);
}

/** A new secret signs first; the previous one keeps signing second for 24 h (scaled). */
export async function rotateSigningSecret(deps: WebhookEndpointsDeps, endpoint: EndpointRow): Promise<string> {
  const secret = newSecret();
  await updateEndpoint(deps.db, endpoint.id, {
    secret_encrypted: deps.box.seal(secret),
    previous_secret_encrypted: endpoint.secret_encrypted,
    previous_secret_expires_at: new Date(Date.now() + ROTATION_OVERLAP_S * 1000 * deps.scale),
  });
  return secret;
}

/** One extra delivery at once with the same webhook-id; the retry schedule is not touched. */
export async function replayEvent(deps: Pick<WebhookEndpointsDeps, 'db'>, event: EventRow): Promise<void> {
  await deps.db.transaction().execute((trx) =>
    enqueueCommand(trx, 'webhook-dispatcher.deliver', event.team_id, {
      event_id: event.id,
      attempt: null,
      replay: true,
    }),
  );
}

/** Replays and test events go to an enabled endpoint only: a disabled one would skip them without a word. */
function checkEnabled(endpoint: EndpointRow): void {
  if (endpoint.status === 'disabled') {
    throw validationError('This webhook is disabled: enable it before sending it events.');
  }
}

// Outbox rows written per statement of a bulk replay.
const REPLAY_CHUNK = 1_000;

/**
 * Bulk recovery: every failed event of the endpoint created at or after `since`, oldest first and at most
 * WEBHOOK_REPLAY_MAX a call, is delivered once more with its own webhook-id, through the outbox like a single
 * replay (the schedule untouched). Each command is skipped if its event is no longer failed when it runs, so a
 * recovery asked twice delivers each event once more, not twice, once the first has succeeded. Past the cap,
 * `nextSince` is the creation time of the first event left, where the next call starts.
 */
export async function replayFailedEvents(
  deps: Pick<WebhookEndpointsDeps, 'db'>,
  endpoint: EndpointRow,
  since: Date,
): Promise<{ replayed: number; nextSince: Date | null }> {
  checkEnabled(endpoint);
  const max = ApiRequests.WEBHOOK_REPLAY_MAX;
  return deps.db.transaction().execute(async (trx) => {
    const events = await failedEventsSince(trx, endpoint.id, since, max);
    const replayed = events.slice(0, max);
    for (let i = 0; i < replayed.length; i += REPLAY_CHUNK) {
      await enqueue(
        trx,
        replayed.slice(i, i + REPLAY_CHUNK).map((event) => ({
          exchange: 'commands' as const,
          type: 'webhook-dispatcher.deliver' as const,
          team_id: endpoint.team_id,
          data: { event_id: event.id, attempt: null, replay: true, only_if_failed: true },
        })),
      );
    }
    return { replayed: replayed.length, nextSince: events[max]?.created_at ?? null };
  });
}

/**
 * A signed sample of one of the 19 events, recorded with the endpoint's events and delivered like them: its
 * first attempt through the outbox now, then the retry schedule if it fails. Its body has `{type, created_at,
 * data}` like every event; the data's values say it is a test.
 */
export async function sendTestEvent(
  deps: Pick<WebhookEndpointsDeps, 'db'>,
  endpoint: EndpointRow,
  type: PublicEventType,
): Promise<string> {
  checkEnabled(endpoint);
  const now = new Date();
  const sourceId = newId();
  const id = eventIdFor(endpoint.id, sourceId, now);
  const body = JSON.stringify({ type, created_at: now.toISOString(), data: sampleEventData(type, now) });
  await deps.db.transaction().execute(async (trx) => {
    await insertTestEvent(trx, {
      id,
      endpoint_id: endpoint.id,
      team_id: endpoint.team_id,
      source_event_id: sourceId,
      type,
      body,
    });
    await enqueueCommand(trx, 'webhook-dispatcher.deliver', endpoint.team_id, {
      event_id: id,
      attempt: 1,
      replay: false,
    });
  });
  return id;
}

function endpointUrl(raw: string, allowPrivate: boolean): string {
  const checked = checkEndpointUrl(raw, { allowPrivate });
  if (!checked.ok) throw validationError(checked.message);
  return checked.url.toString();
}

/** Every name must be one of the 19 public events; an unknown one refuses the save, naming it. */
function eventNames(names: string[]): PublicEventType[] {
  if (names.length === 0) throw validationError('The `events` field must list at least one event.');
  const unknown = names.filter((name) => !PublicEventType.safeParse(name).success);
  if (unknown.length > 0) {
    throw validationError(
      `Unknown event name${unknown.length > 1 ? 's' : ''}: ${unknown.map((name) => `\`${name}\``).join(', ')}.`,
    );
  }
  return [...new Set(names)] as PublicEventType[];
}
