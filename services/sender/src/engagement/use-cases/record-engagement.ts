// Opens and clicks: what the tracking pixel and redirect read before answering (the token, and the team of
// its email, cached), and how each hit is recorded after the answer has gone: batched, one transaction per
// batch writing the engagement rows, the email.opened / email.clicked events (outbox) and last_event.
import type { Kysely, Transaction } from 'kysely';
import type { PublicEventData } from '@postline/contracts';
import { createBatcher, enqueue, newId, type Logger, type OutboxMessage } from '@postline/platform';
import { setLastEvent, emailEventData } from '../../emails/index.ts';
import { findDeliveredTimes, findEmailsByIds, findEmailTeam, insertEngagements } from '../db/engagements.ts';
import type { EmailEngagementsTable, EmailRow, SenderDb } from '../../db/schema.ts';
import { machineRule } from '../domain/engagement-signals.ts';
import type { TrackingCipher, TrackingKind, TrackingLink } from '../domain/tracking-links.ts';

/** One request for a pixel or a tracking link, as the route saw it. */
export type EngagementHit = {
  kind: TrackingKind;
  emailId: string;
  /** The team the email belonged to when the link was served. */
  teamId: string;
  /** The clicked URL; null for an open. */
  url: string | null;
  ip: string;
  userAgent: string;
  method: string;
  at: Date;
};

export type TrackingDeps = {
  cipher: TrackingCipher;
  /** The team of an email (cached: an email never changes team), undefined when it is gone. */
  teamOf: (emailId: string) => Promise<string | undefined>;
  recorder: EngagementRecorder;
};

/** What a token names and its email's team, or undefined for a token that names nothing (404). */
export async function openTrackingLink(
  deps: TrackingDeps,
  token: string,
  kind: TrackingKind,
  host: string,
): Promise<{ link: TrackingLink; teamId: string } | undefined> {
  const link = deps.cipher.open(token, kind, host);
  if (!link) return undefined;
  const teamId = await deps.teamOf(link.emailId);
  return teamId === undefined ? undefined : { link, teamId };
}

/**
 * The team of an email by id, read once and kept (at most `maxEntries`, emptied when full): an email's
 * team never changes, so the redirect of a link clicked again costs no query. A missing email is not kept.
 */
export function createEmailTeamCache(
  db: Kysely<SenderDb>,
  maxEntries = 100_000,
): (emailId: string) => Promise<string | undefined> {
  const teams = new Map<string, string>();
  return async (emailId) => {
    const found = teams.get(emailId);
    if (found !== undefined) return found;
    const team = await findEmailTeam(db, emailId);
    if (team !== undefined) {
      if (teams.size >= maxEntries) teams.clear();
      teams.set(emailId, team);
    }
    return team;
  };
}

export type EngagementRecorder = {
  /** Queues a hit; it is written within `maxWaitMs` (with others that arrived meanwhile). */
  record(hit: EngagementHit): void;
  start(): void;
  /** Writes what is queued. */
  stop(): Promise<void>;
};

/**
 * The in-process batcher of hits. What is queued lives only in memory until its batch commits: a crash
 * between the answer and the write loses at most that (`maxWaitMs` worth of hits, plus a batch in flight).
 * Accepted: opens and clicks are estimates by nature (proxies, prefetches, cached pixels), the reader got
 * the pixel or the redirect either way, and a durable write before answering is what this avoids.
 */
export function createEngagementRecorder(deps: {
  db: Kysely<SenderDb>;
  logger: Logger;
  maxWaitMs?: number;
}): EngagementRecorder {
  const batcher = createBatcher<EngagementHit>({
    maxItems: 500,
    maxWaitMs: deps.maxWaitMs ?? 50,
    maxConcurrent: 2,
    flush: (hits) => deps.db.transaction().execute((trx) => recordEngagements(trx, hits)),
    onError: (err) => deps.logger.error({ err }, 'could not record opens and clicks'),
  });
  return {
    record: (hit) => batcher.add(hit),
    start: () => undefined,
    stop: () => batcher.drain(),
  };
}

/**
 * Records a batch of hits: each becomes an engagement row, an email.opened / email.clicked event with
 * machine_open / scanner_click (domain/engagement-signals.ts, against the email's delivered time) and the
 * email's last_event. A hit whose email is gone or now of another team is dropped.
 */
export async function recordEngagements(trx: Transaction<SenderDb>, hits: readonly EngagementHit[]): Promise<void> {
  const ids = [...new Set(hits.map((hit) => hit.emailId))];
  const emails = new Map((await findEmailsByIds(trx, ids)).map((email) => [email.id, email]));
  const delivered = await findDeliveredTimes(trx, ids);
  const rows: EmailEngagementsTable[] = [];
  const events: OutboxMessage[] = [];
  const lastEvents = new Map<string, { at: Date; kind: TrackingKind }>();
  for (const hit of [...hits].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const email = emails.get(hit.emailId);
    if (!email || email.team_id !== hit.teamId) continue;
    const machine =
      machineRule({
        kind: hit.kind,
        method: hit.method,
        ip: hit.ip,
        userAgent: hit.userAgent,
        at: hit.at,
        deliveredAt: delivered.get(email.id) ?? null,
      }) !== undefined;
    rows.push({
      id: newId(),
      team_id: email.team_id,
      email_id: email.id,
      kind: hit.kind,
      link: hit.url,
      ip: hit.ip,
      user_agent: hit.userAgent,
      machine,
      created_at: hit.at,
    });
    events.push(engagementEvent(email, hit, machine));
    lastEvents.set(email.id, { at: hit.at, kind: hit.kind });
  }
  await insertEngagements(trx, rows);
  await enqueue(trx, events);
  // In id order, so that two batches updating the same emails lock them in the same order (no deadlock).
  for (const [emailId, last] of [...lastEvents].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    await setLastEvent(trx, emailId, last.kind === 'open' ? 'opened' : 'clicked');
}

function engagementEvent(email: EmailRow, hit: EngagementHit, machine: boolean): OutboxMessage {
  const common = emailEventData(email);
  if (hit.kind === 'open') {
    const data: PublicEventData<'email.opened'> = { ...common, machine_open: machine };
    return { exchange: 'events', type: 'email.opened', team_id: email.team_id, data } as OutboxMessage;
  }
  const data: PublicEventData<'email.clicked'> = {
    ...common,
    click: { ipAddress: hit.ip, link: hit.url ?? '', timestamp: hit.at.toISOString(), userAgent: hit.userAgent },
    scanner_click: machine,
  };
  return { exchange: 'events', type: 'email.clicked', team_id: email.team_id, data } as OutboxMessage;
}
