import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../../db/schema.ts';
import { applyDomainState } from '../use-cases/apply-domain-state.ts';

/**
 * Keeps the sender's read model of sending domains from `internal.domain.state`. Each message carries the
 * whole state; a state older than the one held (redelivered or overtaken) is ignored.
 */
export function createDomainStateConsumer(deps: { broker: Broker; db: Kysely<SenderDb>; logger: Logger }): Consumer {
  return createConsumer<SenderDb, 'internal.domain.state'>({
    broker: deps.broker,
    db: deps.db,
    service: 'sender',
    name: 'domain-state',
    bindings: [{ exchange: 'events', routingKey: 'internal.domain.state' }],
    logger: deps.logger,
    handle: (message, trx) => applyDomainState(trx, message.data, new Date(message.occurred_at)),
  });
}
