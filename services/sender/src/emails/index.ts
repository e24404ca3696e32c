export { createSendScheduledConsumer } from './consumers/send-scheduled.ts';
export { claimIdempotencyKey } from './db/accepted-requests.ts';
export {
  type AcceptedRows,
  findEmail,
  findRawMime,
  insertAcceptedEmails,
  isRawEmail,
  setLastEvent,
  setRecipientFeedback,
} from './db/emails.ts';
export { createDmarcLookup, type DmarcLookup } from './dns/dmarc.ts';
export { emailInsights, type Insight } from './domain/insights.ts';
export { publicLinkRoutes } from './http/email-links.ts';
export type { EmailRouteDeps } from './http/emails.ts';
export { emailsRoutes } from './http/routes.ts';
export { createIdempotencyPrune } from './jobs/idempotency-prune.ts';
export { createMetricFold } from './jobs/metric-fold.ts';
export { addMetricDelta } from './db/email-metrics.ts';
export { emailEvent, emailEventData, emailEventsOf } from './outbox/email-events.ts';
export { sendMessages } from './outbox/email-messages.ts';
export { checkSender, onboardingDomainOf, ONBOARDING_DOMAIN_ID, senderRefusal } from './use-cases/sender-checks.ts';
export { getEmail } from './use-cases/read-emails.ts';
export { createSingleAccepts } from './use-cases/single-accepts.ts';
export { writeEmailNow } from './use-cases/accept-emails.ts';
export type { EmailLinkDeps } from './use-cases/email-links.ts';
