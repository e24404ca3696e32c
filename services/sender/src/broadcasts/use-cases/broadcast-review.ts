// GET /broadcasts/{id}/review (Postline's): the broadcast's review (domain/broadcast-review.ts) from the
// sender's own data: its message checked as POST /emails checks it, its from domain, segment and topic, the
// contacts it would reach now, and the email insights of the message as a contact gets it. Also the
// broadcast's results so far (GET /broadcasts/{id}/results).
import type { Kysely } from 'kysely';
import { findPropertyDefinitions, findSegment, findTopic } from '../../audience/index.ts';
import type { BroadcastRow, SenderDb } from '../../db/schema.ts';
import { checkSender, emailInsights, type DmarcLookup } from '../../emails/index.ts';
import { findSendingDomains } from '../../sending-domains/index.ts';
import { broadcastResults, countAudience, type BroadcastResultCounts } from '../db/broadcast-recipients.ts';
import { checkBroadcastMessage, personaliseBroadcast, unsubscribeHeaders } from '../domain/broadcast-emails.ts';
import { probeContact, reviewBroadcast, type ReviewCheck } from '../domain/broadcast-review.ts';
import { messageOf, requireBroadcast } from './broadcasts.ts';

export type ReviewDeps = { db: Kysely<SenderDb>; now: () => Date; devInbox?: boolean; dmarc: DmarcLookup };

export type BroadcastReview = {
  broadcast: BroadcastRow;
  checks: ReviewCheck[];
  /** The contacts it would be sent to now (after unsubscribes, topic opt-outs and the suppression list). */
  recipients: number;
  suppressed: number;
};

export async function reviewOf(deps: ReviewDeps, teamId: string, id: string): Promise<BroadcastReview> {
  const broadcast = await requireBroadcast(deps.db, teamId, id);
  const now = deps.now();
  const message = messageOf(broadcast);
  const checked = checkBroadcastMessage(message, now);
  const fromDomain = checked.ok ? checked.request.fromDomain : undefined;
  const domains = fromDomain ? await findSendingDomains(deps.db, [{ teamId, name: fromDomain }]) : undefined;
  const sender =
    checked.ok && fromDomain && domains
      ? checkSender(domains(teamId, fromDomain), checked.request, { members: [], devInbox: deps.devInbox ?? false })
      : undefined;
  const segment = broadcast.segment_id === null ? undefined : await findSegment(deps.db, teamId, broadcast.segment_id);
  const topic = broadcast.topic_id === null ? undefined : await findTopic(deps.db, teamId, broadcast.topic_id);
  const properties = await findPropertyDefinitions(deps.db, teamId);
  const audience =
    segment && (broadcast.topic_id === null || topic)
      ? await countAudience(deps.db, {
          teamId,
          segmentId: segment.id,
          topic: topic ? { id: topic.id, defaultSubscription: topic.default_subscription } : null,
          now,
        })
      : { recipients: 0, suppressed: 0 };

  // The insights read the message as a contact gets it, with the headers every broadcast email carries.
  // The unsubscribe link is left empty: it is on PUBLIC_BASE_URL, not a link of the sender's to judge.
  const domain = sender?.ok ? sender.domain : undefined;
  const insights = fromDomain
    ? emailInsights({
        html: personaliseBroadcast(message, probeContact(properties), properties, '').html,
        text: message.text,
        raw: false,
        fromDomain,
        headers: unsubscribeHeaders('https://unsubscribe.invalid/', domain?.return_path ?? fromDomain, 'token'),
        bulk: true,
        tracking: {
          on: Boolean(domain?.open_tracking || domain?.click_tracking),
          host:
            domain?.tracking_subdomain && domain.tracking_verified
              ? `${domain.tracking_subdomain}.${domain.name}`
              : null,
        },
        dmarc: await deps.dmarc(fromDomain),
      })
    : [];

  const checks = reviewBroadcast({
    message,
    refusal: checked.ok ? null : checked.refusal.message,
    sender: sender === undefined ? null : sender.ok ? { ok: true, domain: sender.domain.name } : sender,
    segment: broadcast.segment_id === null ? 'missing' : segment ? { name: segment.name } : 'not_found',
    topic: broadcast.topic_id === null ? 'none' : topic ? { name: topic.name } : 'not_found',
    properties,
    audience,
    insights,
  });
  return { broadcast, checks, ...audience };
}

export async function resultsOf(
  deps: { db: Kysely<SenderDb> },
  teamId: string,
  id: string,
): Promise<{ broadcast: BroadcastRow; counts: BroadcastResultCounts }> {
  const broadcast = await requireBroadcast(deps.db, teamId, id);
  // Kept on the broadcast once its emails began to age out (the retention job); counted live until then.
  const counts =
    (broadcast.final_results?.counts as BroadcastResultCounts | undefined) ??
    (await broadcastResults(deps.db, { id: broadcast.id, topicId: broadcast.topic_id }));
  return { broadcast, counts };
}
