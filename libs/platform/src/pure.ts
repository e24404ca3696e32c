// The platform's pure entry, '@postline/platform/pure': the helpers that do no I/O and load no runtime
// library (no express, amqplib, pg, kysely, pino or prom-client), for domain/ code and its unit tests. The
// runtime entry, '@postline/platform', re-exports all of it; a module added here must import
// nothing that loads a runtime library (a type-only import is fine).
export { parseEnv, bool, port, positiveNumber, commaList, BaseEnv, BrokerEnv, ConfigError } from './config/config.ts';
export { formatTimestamp } from './time/time.ts';
export { createOpenedCache } from './cache/opened-cache.ts';
export { loadOnFirstUse } from './lifecycle/load-on-first-use.ts';
export { newId, isUuid, uuidv7Time, uuidToBytes, uuidFromBytes } from './ids/ids.ts';
export { sha256Hex, safeEqual, randomToken, createSecretBox, type SecretBox } from './crypto/crypto.ts';
export { verpAddress, parseVerp, verpKeyOf, type VerpInput, type VerpToken } from './crypto/verp.ts';
export {
  classifyReply,
  parseEnhancedCode,
  expiredDeferralSubType,
  type BounceClass,
} from './mail/bounce-classification.ts';
export { formatSmtpReply, smtpReply, smtpReplyError, smtpReplyText, type SmtpReply } from './mail/smtp-reply.ts';
export {
  createLinkSigner,
  createSignedTokenCodec,
  linkUrl,
  LINK_PATHS,
  type Link,
  type LinkKind,
  type LinkSigner,
  type SignedTokenCodec,
} from './crypto/public-links.ts';
export {
  ApiError,
  notFound,
  validationError,
  missingField,
  invalidParameter,
  pgCode,
  PG_UNIQUE_VIOLATION,
} from './errors/errors.ts';
export {
  exchangeFor,
  timerMessage,
  outboxRows,
  type OutboxRow,
  type OutboxMessage,
  type EventKey,
  type CommandKey,
} from './outbox/messages.ts';
export { isPublicAddress, checkTargetAddress, type AddressCheck } from './net/address-policy.ts';
