import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer } from '@postline/platform';
import type { DomainsDb } from '../db/schema.ts';
import { applyCheck, prepareCheck, type CheckDeps, type Findings } from '../use-cases/check-domain.ts';

/**
 * Runs a domain's check when its scheduler timer fires (`domain-verifier.check-domain`). The lookups run
 * before the transaction; a redelivered command is absorbed by the inbox, and a check of a domain
 * deleted meanwhile does nothing.
 */
export function createCheckDomainConsumer(deps: CheckDeps & { broker: Broker; db: Kysely<DomainsDb> }): Consumer {
  return createConsumer<DomainsDb, 'domain-verifier.check-domain', Findings | undefined>({
    broker: deps.broker,
    db: deps.db,
    service: 'domain-verifier',
    name: 'check-domain',
    bindings: [{ exchange: 'commands', routingKey: 'domain-verifier.check-domain' }],
    // Each check may wait on DNS timeouts; a few at a time keeps the pool free for the API.
    prefetch: 8,
    logger: deps.logger,
    prepare: async (message) =>
      message.team_id ? prepareCheck(deps, message.team_id, message.data.domain_id) : undefined,
    handle: async (message, trx, findings) => {
      if (!findings || !message.team_id) return;
      await applyCheck(deps, trx, {
        teamId: message.team_id,
        domainId: message.data.domain_id,
        trigger: 'scheduled',
        findings,
      });
    },
  });
}
