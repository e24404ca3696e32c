import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { InboundDb } from '../db/schema.ts';
import { applyDomainState } from '../use-cases/apply-domain-state.ts';

/**
 * Keeps the inbound-smtp's read model of domains from `internal.domain.state` (which domains receive mail,
 * and their return paths). Each message carries the whole state; a state older than the one held
 * (redelivered or overtaken) is ignored.
 */
export function createDomainStateConsumer(deps: { broker: Broker; db: Kysely<InboundDb>; logger: Logger }): Consumer {
  return createConsumer<InboundDb, 'internal.domain.state'>({
    broker: deps.broker,
    db: deps.db,
    service: 'inbound-smtp',
    name: 'domain-state',
    bindings: [{ exchange: 'events', routingKey: 'internal.domain.state' }],
    logger: deps.logger,
    handle: (message, trx) => applyDomainState(trx, message.data, new Date(message.occurred_at)),
  });
}
