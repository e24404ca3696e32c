export { infraFromEnv, dockerAvailable, type Infra } from './infra.ts';
export { createTestDatabase, uniqueName, type TestDatabase } from './db.ts';
export { startDnsServer, type DnsServer, type DnsRecord, type DnsFailure } from './dns.ts';
export { observeBroker, type BrokerObserver, type ObservedMessage } from './observe.ts';
export { startWebhookReceiver, verifyDelivery, type WebhookReceiver, type ReceivedDelivery, type Reply } from './webhook-receiver.ts';
export { waitFor, sleep } from './wait.ts';
export { deliveredData, deliveredEnvelope, TEST_TEAM_ID } from './envelopes.ts';
export { startSystem, freePort, type System, type RunningService } from './system.ts';
