// Broadcasts (as in Resend's API reference): a draft is created, edited, sent now or scheduled, canceled, deleted.
// Sending checks the message as POST /emails would and the team's right to send from its domain, marks
// the broadcast queued and puts the fan-out's first command in the outbox in the same transaction
// (use-cases/broadcast-fan-out.ts makes the emails, page by page); scheduling sets a scheduler timer
// instead, which sends it when it fires.
import type { Kysely, Transaction } from 'kysely';
import type { BounceType, PaginationQuery } from '@postline/contracts';
import {
  ApiError,
  enqueue,
  isUuid,
  newId,
  notFound,
  timerMessage,
  validationError,
  type OutboxMessage,
  type Page,
} from '@postline/platform';
import {
  findEngagementSummaries,
  listBroadcastRecipients,
  cancelPendingBroadcastEmails,
  type RecipientListItem,
  type RecipientListType,
} from '../db/broadcast-recipients.ts';
import { listClickedLinks, type ClickedLink } from '../../engagement/index.ts';
import {
  deleteBroadcast,
  findBroadcast,
  findBroadcastSettings,
  insertBroadcast,
  listBroadcasts,
  lockBroadcast,
  updateBroadcast,
  type BroadcastFields,
} from '../db/broadcasts.ts';
import type { BroadcastRow, BroadcastStatus, SenderDb } from '../../db/schema.ts';
import { findSendingDomains } from '../../sending-domains/index.ts';
import { findPropertyDefinitions, findTopic, requireSegment } from '../../audience/index.ts';
import { checkBroadcastMessage, type BroadcastMessage } from '../domain/broadcast-emails.ts';
import { reviewBroadcast } from '../domain/broadcast-review.ts';
import { parseScheduledAt, refusalError } from '../../message/index.ts';
import { checkSender, senderRefusal } from '../../emails/index.ts';

/** `devInbox`: DEV_INBOX is on, so a domain the team has added may send before it is verified. */
export type BroadcastDeps = { db: Kysely<SenderDb>; now: () => Date; devInbox?: boolean };

/**
 * Who asks: a dashboard user with their role in the team, or undefined for an API key (only full-access keys
 * reach broadcasts; a key acts as an admin).
 */
export type Actor = { id: string; role: 'admin' | 'member' } | undefined;

/** What a send request did: the broadcast went (or was scheduled), or waits for an admin's approval. */
export type SendOutcome = 'queued' | 'scheduled' | 'awaiting_approval';

/** The fields of a create or update request; absent: unchanged (update) or none (create). */
export type BroadcastInput = {
  name?: string | null;
  segmentId?: string;
  from?: string;
  subject?: string;
  replyTo?: string[];
  previewText?: string | null;
  html?: string | null;
  text?: string | null;
  topicId?: string | null;
};

const BROADCAST_NOT_FOUND = 'Broadcast not found';

/** Creates a draft, or sends it at once (`send`), or schedules it (`send` with `scheduledAt`). */
/**
 * Review errors the dashboard blocks on but the API's send does not: Resend's API sends a broadcast without
 * an unsubscribe link in its body, so an integration moved to Postline must be able to, and every broadcast
 * email carries the one-click List-Unsubscribe headers (RFC 8058) whatever its body says.
 */
const DASHBOARD_ONLY_CHECKS = new Set(['unsubscribe_link']);

export async function createBroadcast(
  deps: BroadcastDeps,
  teamId: string,
  input: BroadcastInput & { send: boolean; scheduledAt: string | undefined },
  actor: Actor = undefined,
): Promise<string> {
  if (input.scheduledAt !== undefined && !input.send) {
    throw validationError('The `scheduled_at` field can only be used with `send: true`.');
  }
  if (input.segmentId === undefined) throw missingSegment();
  const fields = await checkedFields(deps, teamId, input, undefined);
  const id = newId();
  await deps.db.transaction().execute(async (trx) => {
    const row = await insertBroadcast(trx, {
      id,
      team_id: teamId,
      name: null,
      segment_id: null,
      from_header: null,
      subject: null,
      preview_text: null,
      html: null,
      text: null,
      topic_id: null,
      scheduled_at: null,
      sent_at: null,
      ...fields,
      created_at: deps.now(),
    });
    if (input.send) await startSending(deps, trx, row, input.scheduledAt, actor);
  });
  return id;
}

/**
 * Edits a draft or scheduled broadcast; once sent (or queued, or canceled) only its name. Under the team's
 * approval setting a member may not change a scheduled broadcast's message or audience (an admin approved
 * it, or scheduled it, as it is): cancelling it brings it back to a draft, whose sending waits for approval.
 */
export async function changeBroadcast(
  deps: BroadcastDeps,
  teamId: string,
  id: string,
  input: BroadcastInput,
  actor: Actor = undefined,
): Promise<void> {
  const current = await requireBroadcast(deps.db, teamId, id);
  const editable = current.status === 'draft' || current.status === 'scheduled';
  const others = Object.entries(input).filter(([key, value]) => key !== 'name' && value !== undefined);
  if (!editable && others.length > 0) {
    throw validationError(`Only the name of a ${current.status} broadcast can be changed.`, 403);
  }
  const fields = await checkedFields(deps, teamId, input, current);
  await deps.db.transaction().execute(async (trx) => {
    const locked = await lockBroadcast(trx, teamId, current.id);
    if (!locked) throw notFound(BROADCAST_NOT_FOUND);
    if (others.length > 0 && locked.status !== 'draft' && locked.status !== 'scheduled') {
      throw validationError(`Only the name of a ${locked.status} broadcast can be changed.`, 403);
    }
    if (
      others.length > 0 &&
      locked.status === 'scheduled' &&
      actor?.role === 'member' &&
      (await findBroadcastSettings(trx, locked.team_id)).require_approval
    ) {
      throw new ApiError(
        403,
        'invalid_permission',
        'A scheduled broadcast is sent as an admin approved or scheduled it: cancel it to change it (back to a draft), then send it for approval again.',
      );
    }
    await updateBroadcast(trx, locked.team_id, locked.id, fields);
  });
}

/** Deletes a draft or scheduled broadcast (and its timer). */
export async function removeBroadcast(deps: BroadcastDeps, teamId: string, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const broadcast = await lockTeamBroadcast(trx, teamId, id);
    if (broadcast.status !== 'draft' && broadcast.status !== 'scheduled') {
      throw validationError('Only draft or scheduled broadcasts can be deleted.', 403);
    }
    if (broadcast.status === 'scheduled') await enqueue(trx, [cancelTimer(broadcast)]);
    await deleteBroadcast(trx, broadcast.team_id, broadcast.id);
  });
}

/** POST /broadcasts/{id}/send: a draft (or a scheduled broadcast, moved) goes now or at `scheduledAt`. */
export async function sendBroadcast(
  deps: BroadcastDeps,
  teamId: string,
  id: string,
  scheduledAt: string | undefined,
  actor: Actor = undefined,
): Promise<SendOutcome> {
  return deps.db.transaction().execute(async (trx) => {
    const broadcast = await lockTeamBroadcast(trx, teamId, id);
    if (broadcast.status !== 'draft' && broadcast.status !== 'scheduled') {
      throw validationError('Only draft or scheduled broadcasts can be sent.', 403);
    }
    return startSending(deps, trx, broadcast, scheduledAt, actor);
  });
}

/**
 * Cancels a broadcast: a scheduled one goes back to draft (its timer canceled), as does one awaiting
 * approval (its request withdrawn); a queued one is canceled for good, its fan-out stops at its next page,
 * and its emails not yet handed to the MTA are canceled.
 */
export async function cancelBroadcast(deps: BroadcastDeps, teamId: string, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const broadcast = await lockTeamBroadcast(trx, teamId, id);
    if (broadcast.status === 'scheduled') {
      await updateBroadcast(trx, broadcast.team_id, broadcast.id, { status: 'draft', scheduled_at: null });
      await enqueue(trx, [cancelTimer(broadcast)]);
    } else if (broadcast.status === 'awaiting_approval') {
      await updateBroadcast(trx, broadcast.team_id, broadcast.id, { status: 'draft', ...NO_APPROVAL_REQUEST });
    } else if (broadcast.status === 'queued') {
      await updateBroadcast(trx, broadcast.team_id, broadcast.id, { status: 'canceled' });
      await cancelPendingBroadcastEmails(trx, broadcast.id, deps.now());
    } else {
      throw validationError('Only queued or scheduled broadcasts can be canceled', 403);
    }
  });
}

export async function getBroadcast(deps: BroadcastDeps, teamId: string, id: string): Promise<BroadcastRow> {
  return requireBroadcast(deps.db, teamId, id);
}

export async function pageOfBroadcasts(
  deps: BroadcastDeps,
  teamId: string,
  query: PaginationQuery,
  status?: BroadcastStatus,
): Promise<Page<BroadcastRow>> {
  return listBroadcasts(deps.db, teamId, query, status);
}

export async function pageOfBroadcastRecipients(
  deps: BroadcastDeps,
  teamId: string,
  id: string,
  filter: { type: RecipientListType; email: string | undefined; bounceType: BounceType | undefined },
  query: PaginationQuery,
): Promise<Page<BroadcastRecipientItem>> {
  const broadcast = await requireBroadcast(deps.db, teamId, id);
  const page = await listBroadcastRecipients(deps.db, { id: broadcast.id, topicId: broadcast.topic_id }, filter, query);
  if (filter.type !== 'opened' && filter.type !== 'clicked') return page;
  // The opened and clicked lists say how many opens or clicks, and which links were clicked.
  const kind = filter.type === 'opened' ? 'open' : 'click';
  const emailIds = page.data.flatMap((item) => (item.email_id === null ? [] : [item.email_id]));
  const summaries = await findEngagementSummaries(deps.db, emailIds, kind);
  return {
    ...page,
    data: page.data.map((item) => {
      const summary = item.email_id === null ? undefined : summaries.get(item.email_id);
      return {
        ...item,
        count: summary?.count ?? 0,
        ...(kind === 'click' ? { clicked_links: summary?.links ?? [] } : {}),
      };
    }),
  };
}

/** A recipients list item; the opened and clicked lists add the count and the clicked links. */
export type BroadcastRecipientItem = RecipientListItem & { count?: number; clicked_links?: string[] };

/** The links clicked in a broadcast's emails, most clicked first (clicks, and emails that clicked). */
export async function broadcastClickedLinks(deps: BroadcastDeps, teamId: string, id: string): Promise<ClickedLink[]> {
  const broadcast = await requireBroadcast(deps.db, teamId, id);
  return broadcast.final_results?.links ?? listClickedLinks(deps.db, broadcast.team_id, broadcast.id);
}

/**
 * A scheduled broadcast's timer fired: it goes now unless it was canceled, sent, or moved to another time
 * than `scheduledAt` (that time's timer sends it).
 */
export async function sendScheduledBroadcast(
  trx: Transaction<SenderDb>,
  teamId: string,
  id: string,
  scheduledAt: string,
): Promise<void> {
  const broadcast = await lockBroadcast(trx, teamId, id);
  if (!broadcast || broadcast.status !== 'scheduled') return;
  if (broadcast.scheduled_at?.getTime() !== new Date(scheduledAt).getTime()) return;
  await updateBroadcast(trx, broadcast.team_id, broadcast.id, { status: 'queued' });
  await enqueue(trx, [fanOutCommand(broadcast, null)]);
}

/** The first command of a queued broadcast's fan-out (and, with `after`, each next page's). */
export function fanOutCommand(broadcast: Pick<BroadcastRow, 'id' | 'team_id'>, after: string | null): OutboxMessage {
  return {
    exchange: 'commands',
    type: 'sender.fan-out-broadcast',
    team_id: broadcast.team_id,
    data: { broadcast_id: broadcast.id, after },
  };
}

/**
 * Checks the locked broadcast can go (its message as POST /emails checks it, its segment and topic the
 * team's, its from domain verified, then the review's other errors: domain/broadcast-review.ts), then marks
 * it queued with the fan-out's first command, or scheduled with its timer; or, when the team requires
 * approval and a member asks, awaiting approval with the time asked for.
 */
export async function startSending(
  deps: BroadcastDeps,
  trx: Transaction<SenderDb>,
  broadcast: BroadcastRow,
  scheduledAt: string | undefined,
  actor: Actor,
): Promise<SendOutcome> {
  const now = deps.now();
  const checked = checkBroadcastMessage(messageOf(broadcast), now);
  if (!checked.ok) throw refusalError(checked.refusal);
  if (broadcast.segment_id === null) throw missingSegment();
  const segment = await requireSegment(trx, broadcast.team_id, broadcast.segment_id);
  const topic = broadcast.topic_id === null ? undefined : await findTopic(trx, broadcast.team_id, broadcast.topic_id);
  if (broadcast.topic_id !== null && !topic) throw notFound('Topic not found');
  const domains = await findSendingDomains(trx, [{ teamId: broadcast.team_id, name: checked.request.fromDomain }]);
  const sender = checkSender(domains(broadcast.team_id, checked.request.fromDomain), checked.request, {
    members: [],
    devInbox: deps.devInbox ?? false,
  });
  if (!sender.ok) throw senderRefusal(sender);
  const errors = reviewBroadcast({
    message: messageOf(broadcast),
    refusal: null,
    sender: { ok: true, domain: checked.request.fromDomain },
    segment: { name: segment.name },
    topic: topic ? { name: topic.name } : 'none',
    properties: await findPropertyDefinitions(trx, broadcast.team_id),
  }).filter((check) => check.level === 'error' && !DASHBOARD_ONLY_CHECKS.has(check.check));
  if (errors.length > 0) {
    throw new ApiError(
      422,
      'broadcast_review_failed',
      `The broadcast cannot be sent: ${errors.map((check) => check.message).join(' ')}`,
    );
  }

  const parsed = scheduledAt === undefined ? undefined : parseScheduledAt(scheduledAt, now);
  if (parsed && !parsed.ok) throw refusalError(parsed.refusal);
  const at = parsed?.ok ? parsed.date : null;
  const messages: OutboxMessage[] = broadcast.status === 'scheduled' ? [cancelTimer(broadcast)] : [];
  let outcome: SendOutcome;
  if (actor?.role === 'member' && (await findBroadcastSettings(trx, broadcast.team_id)).require_approval) {
    await updateBroadcast(trx, broadcast.team_id, broadcast.id, {
      status: 'awaiting_approval',
      scheduled_at: null,
      approval_requested_by: actor.id,
      approval_requested_at: now,
      approval_scheduled_at: at,
      ...NO_REJECTION,
    });
    outcome = 'awaiting_approval';
  } else if (at === null) {
    await updateBroadcast(trx, broadcast.team_id, broadcast.id, {
      status: 'queued',
      scheduled_at: null,
      ...NO_APPROVAL_REQUEST,
      ...NO_REJECTION,
    });
    messages.push(fanOutCommand(broadcast, null));
    outcome = 'queued';
  } else {
    await updateBroadcast(trx, broadcast.team_id, broadcast.id, {
      status: 'scheduled',
      scheduled_at: at,
      ...NO_APPROVAL_REQUEST,
      ...NO_REJECTION,
    });
    messages.push(
      timerMessage(broadcast.team_id, sendTimerKey(broadcast.id), at, 'sender.send-broadcast', {
        broadcast_id: broadcast.id,
        scheduled_at: at.toISOString(),
      }),
    );
    outcome = 'scheduled';
  }
  await enqueue(trx, messages);
  return outcome;
}

/** The columns of a pending approval request, cleared. */
export const NO_APPROVAL_REQUEST = {
  approval_requested_by: null,
  approval_requested_at: null,
  approval_scheduled_at: null,
} as const;

/** The columns of the last rejection, cleared (a broadcast sent again starts afresh). */
const NO_REJECTION = { rejected_by: null, rejected_at: null, rejection_reason: null } as const;

function missingSegment() {
  return refusalError({ name: 'missing_required_field', message: 'Missing `segment_id` field.' });
}

function sendTimerKey(broadcastId: string): string {
  return `broadcast-send:${broadcastId}`;
}

function cancelTimer(broadcast: BroadcastRow): OutboxMessage {
  return {
    exchange: 'commands',
    type: 'scheduler.cancel-timer',
    team_id: broadcast.team_id,
    data: { key: sendTimerKey(broadcast.id) },
  };
}

export function messageOf(broadcast: BroadcastRow): BroadcastMessage {
  return {
    fromHeader: broadcast.from_header,
    subject: broadcast.subject,
    replyTo: broadcast.reply_to,
    previewText: broadcast.preview_text,
    html: broadcast.html,
    text: broadcast.text,
  };
}

/**
 * The columns an input sets, checked: the message (merged over `current`) as POST /emails would check it,
 * and the segment and topic the team's (404 otherwise).
 */
async function checkedFields(
  deps: BroadcastDeps,
  teamId: string,
  input: BroadcastInput,
  current: BroadcastRow | undefined,
): Promise<BroadcastFields> {
  const fields: BroadcastFields = {};
  if (input.name !== undefined) fields.name = input.name;
  if (input.from !== undefined) fields.from_header = input.from.trim();
  if (input.subject !== undefined) fields.subject = input.subject;
  if (input.replyTo !== undefined) fields.reply_to = input.replyTo;
  if (input.previewText !== undefined) fields.preview_text = input.previewText;
  if (input.html !== undefined) fields.html = input.html;
  if (input.text !== undefined) fields.text = input.text;
  const messageChanged = ['from', 'subject', 'replyTo', 'html', 'text'].some(
    (key) => input[key as keyof BroadcastInput] !== undefined,
  );
  if (messageChanged || current === undefined) {
    const merged: BroadcastMessage = {
      fromHeader: fields.from_header ?? current?.from_header ?? null,
      subject: fields.subject ?? current?.subject ?? null,
      replyTo: fields.reply_to ?? current?.reply_to ?? [],
      previewText: null,
      html: fields.html !== undefined ? fields.html : (current?.html ?? null),
      text: fields.text !== undefined ? fields.text : (current?.text ?? null),
    };
    const checked = checkBroadcastMessage(merged, deps.now());
    if (!checked.ok) throw refusalError(checked.refusal);
  }
  if (input.segmentId !== undefined) fields.segment_id = (await requireSegment(deps.db, teamId, input.segmentId)).id;
  if (input.topicId !== undefined) {
    if (input.topicId === null) fields.topic_id = null;
    else {
      const topic = isUuid(input.topicId) ? await findTopic(deps.db, teamId, input.topicId.toLowerCase()) : undefined;
      if (!topic) throw notFound('Topic not found');
      fields.topic_id = topic.id;
    }
  }
  return fields;
}

export async function requireBroadcast(db: Kysely<SenderDb>, teamId: string, id: string): Promise<BroadcastRow> {
  const row = isUuid(id) ? await findBroadcast(db, teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound(BROADCAST_NOT_FOUND);
  return row;
}

export async function lockTeamBroadcast(trx: Transaction<SenderDb>, teamId: string, id: string): Promise<BroadcastRow> {
  const row = isUuid(id) ? await lockBroadcast(trx, teamId, id.toLowerCase()) : undefined;
  if (!row) throw notFound(BROADCAST_NOT_FOUND);
  return row;
}
