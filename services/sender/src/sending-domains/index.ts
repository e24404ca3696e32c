export { createDomainStateConsumer } from './consumers/domain-state.ts';
export { type DomainLookup, type LookedUpDomain, findSendingDomains } from './db/sending-domains.ts';
export { trackingHostRoutes } from './http/tracking-hosts.ts';
