export { createDeliverEmailConsumer } from './consumers/deliver-email.ts';
export { createFeedbackConsumer } from './consumers/feedback.ts';
export { createAttemptLoader } from './db/attempts.ts';
export { deliveryRoutes } from './http/attempts.ts';
export { type Waiting, waitingRecipients } from './db/recipients.ts';
export type { RecipientResult } from './domain/recipient-result.ts';
export { createDeliveryClaims } from './jobs/delivery-claims.ts';
export { createDkimSigner } from './mime/dkim.ts';
export { createComposerPool, defaultComposerThreads } from './mime/composer-pool.ts';
export { createByteBudget } from './smtp/budget.ts';
export { createMta } from './smtp/mta.ts';
export {
  createShaper,
  DEFAULT_SHAPING,
  readShapingFile,
  reloadShapingOnHangup,
  type ProviderState,
  type Shaper,
  type ShapingEvent,
} from './smtp/shaping.ts';
export { createMxResolver } from './smtp/mx.ts';
export { PROVIDERS, type Provider } from './domain/providers.ts';
export { replyCodesOf, sanitizeReply } from './domain/shaping-reply.ts';
export type { DeliverDeps } from './use-cases/deliver-emails.ts';
export type { DeliveryRequest, Mta, RecipientOutcome } from './smtp/types.ts';
