export { createUnsubscribeMailConsumer } from './consumers/unsubscribe-mail.ts';
export { type ClickedLink, listClickedLinks } from './db/engagements.ts';
export { createTrackingCipher, type TrackingCipher } from './domain/tracking-links.ts';
export { rewriteForTracking } from './domain/tracking-rewrite.ts';
export {
  createUnsubscribeSigner,
  UNSUBSCRIBE_PATH,
  type UnsubscribeSigner,
  unsubscribeUrl,
} from './domain/unsubscribe-links.ts';
export { engagementRoutes } from './http/routes.ts';
export { createEmailTeamCache, createEngagementRecorder, type TrackingDeps } from './use-cases/record-engagement.ts';
export type { UnsubscribeDeps } from './use-cases/unsubscribe.ts';
