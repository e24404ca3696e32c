import type { Transaction } from 'kysely';
import type { DomainState } from '@postline/contracts';
import { upsertReceivingDomain } from '../db/receiving-domains.ts';
import { deleteDmarcReportsOfDomain } from '../db/dmarc-reports.ts';
import type { InboundDb } from '../db/schema.ts';

/**
 * Applies one domain state that occurred at `at`, unless the read model holds a newer one. Each state is
 * whole, so applying it is an upsert; `deleted` leaves a tombstone (deleted, receiving nothing) rather than
 * no row, so that an older state arriving after it cannot bring the domain back. A deleted domain's DMARC
 * reports are deleted with it.
 */
export async function applyDomainState(trx: Transaction<InboundDb>, state: DomainState, at: Date): Promise<void> {
  await upsertReceivingDomain(trx, {
    domain_id: state.domain_id,
    team_id: state.team_id,
    name: state.name.toLowerCase(),
    return_path: state.return_path.toLowerCase(),
    // The domain-verifier sets it only when receiving is enabled and its MX record verified.
    receiving_verified: state.receiving_verified && state.capabilities.receiving === 'enabled' && !state.deleted,
    sending_enabled: state.capabilities.sending === 'enabled' && !state.deleted,
    deleted: state.deleted,
    state_at: at,
  });
  if (state.deleted) await deleteDmarcReportsOfDomain(trx, state.domain_id);
}
