export { infraFromEnv, dockerAvailable, type Infra } from './infra.ts';
export { createTestDatabase, sequentialScans, uniqueName, type TestDatabase } from './db.ts';
export { makeTimerDue } from './timers.ts';
export { startDnsServer, type DnsServer, type DnsRecord, type DnsFailure } from './dns.ts';
export { observeBroker, type BrokerObserver, type ObservedMessage } from './observe.ts';
export {
  startWebhookReceiver,
  verifyDelivery,
  type WebhookReceiver,
  type ReceivedDelivery,
  type Reply,
} from './webhook-receiver.ts';
export { waitFor, sleep, nextSecond, nudgeUntil } from './wait.ts';
export { deliveredData, deliveredEnvelope, TEST_TEAM_ID } from './envelopes.ts';
export { startSystem, freePort, deleteBrokerPrefix, ROOT, type System, type RunningService } from './system.ts';
export { useSystem, uniqueDomain, type FileSystem, type SharedSystem, type SharedSystemEnv } from './shared-system.ts';
export {
  startSinkMx,
  defaultSinkBehaviour,
  type SinkMx,
  type SinkMxOptions,
  type SinkMessage,
  type SinkReply,
} from './mx.ts';
export { createVerifiedDomain, type VerifiedDomain } from './domains.ts';
export { dataOf, mimePartOf, sendThroughOutage, testResend } from './sdk.ts';
export { startDeliveringSystem } from './delivering-system.ts';
export {
  createReceivingDomain,
  openRawSmtp,
  rcptReply,
  startBareMx,
  type ReceivingDomain,
  type RawSmtp,
  type SmtpReply,
} from './inbound.ts';
export { startTcpProxy, type TcpProxy, type CutMode } from './tcp-proxy.ts';
export {
  apiResponseProblems,
  checkApiAnswer,
  checkApiResponse,
  validateApiResponses,
  type ValidationOptions,
} from './api-validation.ts';
