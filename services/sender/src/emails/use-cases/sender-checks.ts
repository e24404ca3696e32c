// What accepting an email checks first, for one request or a group: the sending domains that sends name
// and the team's right to send from them, and the topics they are sent under.
import type { Kysely } from 'kysely';
import { notFound, type ApiError } from '@postline/platform';
import type { SenderDb, SendingDomainRow } from '../../db/schema.ts';
import {
  contactForms,
  findTopicSubscriptions,
  type TopicLookup,
  type TopicQuestion,
  type TopicSubscriptions,
} from '../../audience/index.ts';
import { envelopeRecipients, type EmailRequest } from '../../message/index.ts';
import { findSendingDomains, type DomainLookup } from '../../sending-domains/index.ts';

/** What accepting sends reads first: the sending domains they name, and the topics (none read without one). */
export async function lookUpSends(
  db: Kysely<SenderDb>,
  sends: readonly { teamId: string; request: EmailRequest }[],
): Promise<{ domains: DomainLookup; topics: TopicLookup }> {
  const domains = findSendingDomains(
    db,
    sends.map((send) => ({ teamId: send.teamId, name: send.request.fromDomain })),
  );
  const questions = topicQuestions(sends);
  if (questions.length === 0) return { domains: await domains, topics: () => undefined };
  const [domainLookup, topics] = await Promise.all([domains, findTopicSubscriptions(db, questions)]);
  return { domains: domainLookup, topics };
}

/** For each send under a topic: its team's topic, and its recipients with the forms a contact's email may have. */
function topicQuestions(sends: readonly { teamId: string; request: EmailRequest }[]): TopicQuestion[] {
  return sends.flatMap(({ teamId, request }) =>
    request.topicId === null
      ? []
      : [
          {
            teamId,
            topicId: request.topicId,
            recipients: envelopeRecipients(request).map((address) => ({ address, forms: contactForms(address) })),
          },
        ],
  );
}

/** The topic `request` is sent under, as `topics` read it: undefined without one, a 404 when the team has no such topic. */
export function topicOf(
  topics: TopicLookup,
  teamId: string,
  request: EmailRequest,
): TopicSubscriptions | undefined | ApiError {
  if (request.topicId === null) return undefined;
  return topics(teamId, request.topicId) ?? notFound('Topic not found');
}

/**
 * Why this team may not send `request` (the message of a 403 `validation_error`), given the team's domain
 * named by its from address (if any), or the domain it sends from. A key limited to one domain
 * (`keyDomainId`) may send only from that domain.
 */
export function checkSender(
  domain: SendingDomainRow | undefined,
  request: EmailRequest,
  keyDomainId: string | undefined,
): { ok: true; domain: SendingDomainRow } | { ok: false; message: string } {
  if (!domain || !domain.sending_verified) {
    return {
      ok: false,
      message: `The ${request.fromDomain} domain is not verified. Please, add and verify your domain on the /domains API.`,
    };
  }
  if (keyDomainId !== undefined && domain.domain_id !== keyDomainId) {
    return { ok: false, message: `This API key can only send from its own domain, not from ${request.fromDomain}.` };
  }
  return { ok: true, domain };
}

/** A sender check that failed inside a group: the request's 403 `validation_error`. */
export class SenderRefused extends Error {}
