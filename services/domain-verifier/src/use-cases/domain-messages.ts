// What a change to a domain sends out, always inside the transaction that made the change (outbox): the
// public domain.* event, the internal state for the sender's and inbound-smtp's read models, and the check
// timer.
import type { Transaction } from 'kysely';
import type { DomainCreated } from '@postline/contracts';
import { enqueue, enqueueCommand, enqueueEvent, timerMessage } from '@postline/platform';
import type { RecordStates } from '../db/domains.ts';
import type { DomainRow, DomainsDb } from '../db/schema.ts';
import { capabilitiesOf, eventRecord, recordSpecsOf, type Infrastructure } from '../domain/records.ts';

/** The payload of domain.created / updated / deleted: records included, never the key. */
export function eventData(domain: DomainRow, states: RecordStates, infra: Infrastructure): DomainCreated {
  return {
    id: domain.id,
    name: domain.name,
    status: domain.status,
    created_at: domain.created_at.toISOString(),
    region: domain.region,
    capabilities: capabilitiesOf(domain),
    records: recordSpecsOf(domain, infra).map((spec) => eventRecord(spec, states[spec.kind].status)),
  };
}

export async function publishEvent(
  trx: Transaction<DomainsDb>,
  type: 'domain.created' | 'domain.updated' | 'domain.deleted',
  domain: DomainRow,
  states: RecordStates,
  infra: Infrastructure,
): Promise<void> {
  await enqueueEvent(trx, type, domain.team_id, eventData(domain, states, infra));
}

/** The whole current state, for the read models; `deleted` tells them to drop it. */
export async function publishState(trx: Transaction<DomainsDb>, domain: DomainRow, deleted = false): Promise<void> {
  await enqueueEvent(trx, 'internal.domain.state', domain.team_id, {
    domain_id: domain.id,
    team_id: domain.team_id,
    name: domain.name,
    status: domain.status,
    capabilities: capabilitiesOf(domain),
    dkim_selector: domain.dkim_selector,
    dkim_private_key_encrypted: domain.dkim_private_key_encrypted,
    return_path: `${domain.custom_return_path}.${domain.name}`,
    sending_verified: domain.sending && domain.sending_verified,
    receiving_verified: domain.receiving && domain.receiving_verified,
    tls: domain.tls,
    open_tracking: domain.open_tracking,
    click_tracking: domain.click_tracking,
    tracking_subdomain: domain.tracking_subdomain,
    // Open and click tracking apply only once this is true (the tracking host resolves to us and our CA may
    // issue its certificate).
    tracking_verified: domain.tracking_subdomain !== null && domain.tracking_verified,
    deleted,
  });
}

/** The one timer per domain: its next automatic check. */
export function checkTimerKey(domainId: string): string {
  return `domain-check:${domainId}`;
}

/** Sets (or moves) the domain's check timer; the scheduler sends `domain-verifier.check-domain` at `due`. */
export async function scheduleCheck(trx: Transaction<DomainsDb>, domain: DomainRow, due: Date): Promise<void> {
  await enqueue(trx, [
    timerMessage(domain.team_id, checkTimerKey(domain.id), due, 'domain-verifier.check-domain', {
      domain_id: domain.id,
    }),
  ]);
}

export async function cancelCheck(trx: Transaction<DomainsDb>, domain: DomainRow): Promise<void> {
  await enqueueCommand(trx, 'scheduler.cancel-timer', domain.team_id, { key: checkTimerKey(domain.id) });
}
