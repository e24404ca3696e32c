import { sql, type Kysely, type Transaction } from 'kysely';
import type { DomainState } from '@postline/contracts';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SenderDb } from '../db/schema.ts';

/**
 * Keeps the sender's read model of sending domains from `internal.domain.state`. Each message carries the
 * whole state, so applying it is an upsert; a state older than the one held (redelivered or overtaken) is
 * ignored. `deleted` leaves a tombstone (deleted, never verified) rather than no row, so that an older
 * state arriving after it cannot bring the domain back.
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

/** Applies one domain state that occurred at `at`, unless the row holds a newer one. */
export async function applyDomainState(trx: Transaction<SenderDb>, state: DomainState, at: Date): Promise<void> {
  const row = {
    domain_id: state.domain_id,
    team_id: state.team_id,
    name: state.name,
    status: state.status,
    sending_verified: state.sending_verified && !state.deleted,
    deleted: state.deleted,
    dkim_selector: state.dkim_selector,
    // A tombstone keeps no key: nothing is signed for a deleted domain.
    dkim_private_key_encrypted: state.deleted ? '' : state.dkim_private_key_encrypted,
    return_path: state.return_path,
    tls: state.tls,
    state_at: at,
  };
  const { domain_id: _id, ...update } = row;
  await trx
    .insertInto('sending_domains')
    .values(row)
    .onConflict((oc) => oc.column('domain_id').doUpdateSet(update).where(sql.ref('sending_domains.state_at'), '<=', at))
    .execute();
}
