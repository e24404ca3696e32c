// What accepting an email checks first, for one request or a group: the sending domains that sends name
// and the team's right to send from them, and the topics they are sent under.
import type { Kysely } from 'kysely';
import { ApiError, notFound } from '@postline/platform';
import type { EmailRow, SenderDb, SendingDomainRow } from '../../db/schema.ts';
import {
  contactForms,
  findTopicSubscriptions,
  type TopicLookup,
  type TopicQuestion,
  type TopicSubscriptions,
} from '../../audience/index.ts';
import {
  envelopeRecipients,
  isOnboardingSender,
  isSandboxAddress,
  isSandboxDomain,
  type EmailRequest,
} from '../../message/index.ts';
import { findSendingDomains, type DomainLookup, type LookedUpDomain } from '../../sending-domains/index.ts';
import { pausedMessage } from '../../reputation/index.ts';

/**
 * The domain id of every email sent as the onboarding sender (`onboarding@resend.dev` or
 * `onboarding@postline.test`): no domain of the team's, and none any team can add.
 */
export const ONBOARDING_DOMAIN_ID = '00000000-0000-7000-8000-00000000000b';

/**
 * The sending domain an onboarding email stands on: verified, with nothing to sign with (its recipients are
 * sandbox addresses, which nothing is sent to). Any team's, for any sandbox domain name.
 */
export function onboardingDomain(teamId: string, name: string): SendingDomainRow {
  return {
    domain_id: ONBOARDING_DOMAIN_ID,
    team_id: teamId,
    name,
    status: 'verified',
    sending_verified: true,
    dkim_selector: '',
    dkim_private_key_encrypted: '',
    return_path: `send.${name}`,
    tls: 'opportunistic',
    open_tracking: false,
    click_tracking: false,
    tracking_subdomain: null,
    tracking_verified: false,
    state_at: new Date(0),
    deleted: false,
  };
}

/** The onboarding domain of an email sent as the onboarding sender; undefined for any other email. */
export function onboardingDomainOf(email: Pick<EmailRow, 'domain_id' | 'team_id' | 'from_domain'>) {
  return email.domain_id === ONBOARDING_DOMAIN_ID ? onboardingDomain(email.team_id, email.from_domain) : undefined;
}

/** What accepting sends reads first: the sending domains they name, and the topics (none read without one). */
export async function lookUpSends(
  db: Kysely<SenderDb>,
  sends: readonly { teamId: string; request: EmailRequest }[],
): Promise<{ domains: DomainLookup; topics: TopicLookup }> {
  const domains = findSendingDomains(
    db,
    sends.map((send) => ({ teamId: send.teamId, name: send.request.fromDomain })),
  ).then(withOnboarding);
  const questions = topicQuestions(sends);
  if (questions.length === 0) return { domains: await domains, topics: () => undefined };
  const [domainLookup, topics] = await Promise.all([domains, findTopicSubscriptions(db, questions)]);
  return { domains: domainLookup, topics };
}

/** A team's own domain of that name first; else, for a sandbox domain, the onboarding sender's. */
export function withOnboarding(lookup: DomainLookup): DomainLookup {
  return (teamId, name) => lookup(teamId, name) ?? (isSandboxDomain(name) ? onboardingDomain(teamId, name) : undefined);
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
 * What a request may send besides the team's verified domains, as the gateway and the operator set it:
 * `keyDomainId`, the one domain a key limited to a domain may send from; `members`, the addresses of the
 * team's members (lower-case), to which the onboarding sender may also send; `devInbox`, the development
 * inbox is on: every message stays in the install, so a domain the team has added may send before it is
 * verified.
 */
export type SendGrant = {
  keyDomainId?: string | undefined;
  members: readonly string[];
  devInbox: boolean;
  /**
   * The emails are not new sends but pages of a broadcast already sending: made while the reputation guard
   * has the team or domain paused, they wait with the rest of its queued mail.
   */
  whilePaused?: boolean;
};

/** Why a sender check refused: a 403 `validation_error`, or a 403 `sending_paused` from the reputation guard. */
export type SenderRefusal = { ok: false; message: string; name?: 'sending_paused' };

/** The API error of a refused sender check. */
export function senderRefusal(refusal: Omit<SenderRefusal, 'ok'>): ApiError {
  return new ApiError(403, refusal.name ?? 'validation_error', refusal.message);
}

/**
 * Why this team may not send `request` (the message of a 403 `validation_error`, or `sending_paused` while
 * the reputation guard has the team or the domain paused), given the team's domain named by its from
 * address (if any), or the domain it sends from.
 */
export function checkSender(
  domain: LookedUpDomain | undefined,
  request: EmailRequest,
  grant: SendGrant,
): { ok: true; domain: SendingDomainRow } | SenderRefusal {
  if (domain?.domain_id === ONBOARDING_DOMAIN_ID) return checkOnboarding(domain, request, grant);
  if (!domain || !(domain.sending_verified || grant.devInbox)) {
    return {
      ok: false,
      message: grant.devInbox
        ? `The ${request.fromDomain} domain is not added. Please, add your domain on the /domains API (with the development inbox on, it need not be verified).`
        : `The ${request.fromDomain} domain is not verified. Please, add and verify your domain on the /domains API.`,
    };
  }
  if (grant.keyDomainId !== undefined && domain.domain_id !== grant.keyDomainId) {
    return { ok: false, message: `This API key can only send from its own domain, not from ${request.fromDomain}.` };
  }
  if (domain.paused && !grant.whilePaused) {
    return { ok: false, name: 'sending_paused', message: pausedMessage(domain.paused) };
  }
  const { paused: _paused, ...row } = domain;
  return { ok: true, domain: row };
}

/**
 * The onboarding sender, for a team that has not verified a domain yet: only `onboarding@`, only to sandbox
 * addresses (delivered@, bounced@, complained@, suppressed@ at resend.dev or postline.test) and to the team's
 * members (whose copies stay in the install: the development inbox), only with a key not limited to one
 * domain.
 */
function checkOnboarding(
  domain: SendingDomainRow,
  request: EmailRequest,
  grant: SendGrant,
): { ok: true; domain: SendingDomainRow } | { ok: false; message: string } {
  if (!isOnboardingSender(request.from.address)) {
    return {
      ok: false,
      message: `The ${request.fromDomain} domain is not verified. Please, add and verify your domain on the /domains API, or send from onboarding@${request.fromDomain} to its test addresses.`,
    };
  }
  if (grant.keyDomainId !== undefined) {
    return { ok: false, message: `This API key can only send from its own domain, not from ${request.fromDomain}.` };
  }
  const members = new Set(grant.members);
  const elsewhere = envelopeRecipients(request).filter(
    (address) => !isSandboxAddress(address) && !members.has(address.toLowerCase()),
  );
  if (elsewhere.length > 0) {
    return {
      ok: false,
      message: `${request.from.address} sends only to the test addresses (delivered@, bounced@, complained@ or suppressed@${request.fromDomain}) and to your team's members, not to ${elsewhere.join(', ')}. Verify a domain of yours to send to anyone.`,
    };
  }
  return { ok: true, domain };
}

/** A sender check that failed inside a group: the request's 403 `validation_error` or `sending_paused`. */
export class SenderRefused extends Error {
  readonly refusal: Omit<SenderRefusal, 'ok'>;
  constructor(refusal: Omit<SenderRefusal, 'ok'>) {
    super(refusal.message);
    this.refusal = refusal;
  }
}
