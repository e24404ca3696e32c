import type { Transaction } from 'kysely';
import type { DomainState } from '@postline/contracts';
import type { SenderDb } from '../../db/schema.ts';
import { upsertSendingDomain } from '../db/sending-domains.ts';

/**
 * Applies one domain state that occurred at `at`, unless the sender's read model holds a newer one. Each
 * state is whole, so applying it is an upsert; `deleted` leaves a tombstone (deleted, never verified)
 * rather than no row, so that an older state arriving after it cannot bring the domain back.
 */
export async function applyDomainState(trx: Transaction<SenderDb>, state: DomainState, at: Date): Promise<void> {
  await upsertSendingDomain(trx, {
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
    open_tracking: state.open_tracking,
    click_tracking: state.click_tracking,
    // Older states lack the tracking fields: no tracking host, not verified.
    tracking_subdomain: state.tracking_subdomain ?? null,
    tracking_verified: (state.tracking_verified ?? false) && !state.deleted,
    state_at: at,
  });
}
