// The insights of one of the team's emails: its message, its sending domain's tracking, and whether its From
// domain publishes DMARC, read and checked (domain/insights.ts).
import type { Kysely } from 'kysely';
import { findSendingDomains } from '../../sending-domains/index.ts';
import { isRawEmail } from '../db/emails.ts';
import type { SenderDb } from '../../db/schema.ts';
import type { DmarcLookup } from '../dns/dmarc.ts';
import { emailInsights, type Insight } from '../domain/insights.ts';
import { getEmail } from './read-emails.ts';
import { onboardingDomainOf } from './sender-checks.ts';

export type InsightDeps = { db: Kysely<SenderDb>; dmarc: DmarcLookup };

export async function insightsOf(deps: InsightDeps, teamId: string, id: string | undefined): Promise<Insight[]> {
  const email = await getEmail(deps.db, teamId, id);
  const dmarc = deps.dmarc(email.from_domain);
  const domains = await findSendingDomains(deps.db, [{ teamId, name: email.from_domain }]);
  const domain = domains(teamId, email.from_domain) ?? onboardingDomainOf(email);
  const trackingOn = Boolean(domain?.open_tracking || domain?.click_tracking);
  const trackingHost =
    domain?.tracking_subdomain && domain.tracking_verified ? `${domain.tracking_subdomain}.${domain.name}` : null;
  return emailInsights({
    html: email.html,
    text: email.text,
    raw: isRawEmail(email),
    fromDomain: email.from_domain,
    headers: email.headers,
    bulk: email.broadcast_id !== null || email.topic_id !== null,
    tracking: { on: trackingOn, host: trackingHost },
    dmarc: await dmarc,
  });
}
