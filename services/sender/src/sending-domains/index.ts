export { createDomainStateConsumer } from './consumers/domain-state.ts';
export { type DomainLookup, findSendingDomains } from './db/sending-domains.ts';
export { trackingHostRoutes } from './http/tracking-hosts.ts';
