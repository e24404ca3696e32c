// One attempt to deliver one event to its endpoint: the checks that it is still due, a slot of its endpoint
// and of the process, then the signed POST. Nothing is recorded here (see attempt-records.ts): the POST runs
// outside any transaction, so none is held across a wait of up to 15 s.
import type { Kysely } from 'kysely';
import type { DeliverWebhook } from '@postline/contracts';
import { createKeyedSlots, createOpenedCache, createSlots, type SecretBox } from '@postline/platform';
import { findDeliveryTarget, type DeliveryTarget } from '../db/events.ts';
import type { DispatcherDb } from '../db/schema.ts';
import { signedHeaders } from '../domain/signing.ts';
import type { PostResult, WebhookClient } from '../webhook-http/http-client.ts';

/** What came of one delivery command or first attempt, to be recorded. */
export type AttemptOutcome =
  | { kind: 'skip'; why: 'gone' | 'done' | 'disabled' }
  /** Its endpoint had no slot free (and too many waiting, or it waited too long): try again on a short timer. */
  | { kind: 'busy' }
  | { kind: 'attempted'; result: PostResult; sentAt: Date; endpointFailing: boolean };

export type AttemptMade = Extract<AttemptOutcome, { kind: 'attempted' }>;

/** How an attempt waits for a slot of its endpoint: behind at most `maxWaiting` others, for at most `timeoutMs`. */
export type SlotWait = { maxWaiting?: number; timeoutMs?: number };

export type AttemptDeliveryDeps = {
  db: Kysely<DispatcherDb>;
  box: SecretBox;
  client: Pick<WebhookClient, 'post'>;
  /**
   * Deliveries in flight at once per endpoint. A delivery command waits in process behind at most as many
   * others; beyond that it is busy and waits on a short timer instead, so one slow endpoint holds at most
   * 2 × perEndpoint of the `overall` consumer slots.
   */
  perEndpoint: number;
  /** Deliveries in flight at once overall, in-process first attempts included (also the deliver consumer's prefetch). */
  overall: number;
  now?: () => Date;
};

export type AttemptDelivery = {
  /** Attempts `target` for `command`: skipped when no longer due, busy when no slot was had in time. */
  attempt: (target: DeliveryTarget, command: DeliverWebhook, wait: SlotWait) => Promise<AttemptOutcome>;
  /** A `webhook-dispatcher.deliver` command: reads its event and endpoint, then attempts it. */
  attemptCommand: (command: DeliverWebhook) => Promise<AttemptOutcome>;
};

const USER_AGENT = 'Postline-Webhooks/1.0';

export function createAttemptDelivery(deps: AttemptDeliveryDeps): AttemptDelivery {
  const endpointSlots = createKeyedSlots(deps.perEndpoint);
  // Every holder is a POST with a deadline, so waiting for one of these takes as long as it takes.
  const overallSlots = createSlots(deps.overall);
  // Sealed secrets are immutable strings (a rotation seals a new one), so their plaintext can be kept.
  const openSecret = createOpenedCache((sealed) => deps.box.open(sealed), 10_000);
  const now = () => deps.now?.() ?? new Date();

  async function attempt(target: DeliveryTarget, command: DeliverWebhook, wait: SlotWait): Promise<AttemptOutcome> {
    const { event, endpoint } = target;
    if (
      !command.replay &&
      (event.attempts_made >= (command.attempt ?? 0) || event.status === 'success' || event.status === 'failed')
    ) {
      return { kind: 'skip', why: 'done' };
    }
    if (command.replay && command.only_if_failed && event.status !== 'failed') return { kind: 'skip', why: 'done' };
    if (endpoint.status === 'disabled') return { kind: 'skip', why: 'disabled' };
    const releaseEndpoint = await endpointSlots.acquire(event.endpoint_id, wait);
    if (!releaseEndpoint) return { kind: 'busy' };
    const releaseOverall = await overallSlots.acquire();
    try {
      const sentAt = now();
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...signedHeaders({
          id: event.id,
          timestamp: Math.floor(sentAt.getTime() / 1000),
          body: event.body,
          secrets: secretsOf(target, sentAt),
        }),
      };
      const result = await deps.client.post(endpoint.endpoint, event.body, headers);
      return { kind: 'attempted', result, sentAt, endpointFailing: endpoint.failing_since !== null };
    } finally {
      releaseOverall();
      releaseEndpoint();
    }
  }

  /** The current secret first; during the 24 h after a rotation, the previous one second. */
  function secretsOf({ endpoint }: DeliveryTarget, at: Date): string[] {
    const secrets = [openSecret(endpoint.secret_encrypted)];
    if (
      endpoint.previous_secret_encrypted &&
      endpoint.previous_secret_expires_at &&
      endpoint.previous_secret_expires_at > at
    ) {
      secrets.push(openSecret(endpoint.previous_secret_encrypted));
    }
    return secrets;
  }

  async function attemptCommand(command: DeliverWebhook): Promise<AttemptOutcome> {
    const target = await findDeliveryTarget(deps.db, command.event_id);
    if (!target) return { kind: 'skip', why: 'gone' };
    return attempt(target, command, { maxWaiting: deps.perEndpoint });
  }

  return { attempt, attemptCommand };
}
