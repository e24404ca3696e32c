// The inbound-smtp's read model of domains, kept from `internal.domain.state`.
import { sql, type Kysely, type Transaction } from 'kysely';
import { PREPARED } from '@postline/platform';
import type { InboundDb } from './schema.ts';
import type { ReceivingDomainRow } from './receiving-tables.ts';

/** A domain's row as a state message sets it. */
export type ReceivingDomainState = Omit<ReceivingDomainRow, 'deleted'> & { deleted: boolean };

/** Writes a domain's state that occurred at `state_at`, unless the row holds a newer one. */
export async function upsertReceivingDomain(trx: Transaction<InboundDb>, row: ReceivingDomainState): Promise<void> {
  const { domain_id: _id, ...update } = row;
  await trx
    .insertInto('receiving_domains')
    .values(row)
    .onConflict((oc) =>
      oc.column('domain_id').doUpdateSet(update).where(sql.ref('receiving_domains.state_at'), '<=', row.state_at),
    )
    .execute();
}

/** The live domains named `host` or whose return path is `host` (lower-case), newest state first. */
export async function findDomainsForHost(db: Kysely<InboundDb>, host: string): Promise<ReceivingDomainRow[]> {
  const { rows } = await sql<ReceivingDomainRow>`select ${PREPARED} * from receiving_domains
    where not deleted and (name = ${host} or return_path = ${host}) order by state_at desc`.execute(db);
  return rows;
}

/** The live domain of an id, or undefined. */
export async function findLiveDomain(
  db: Kysely<InboundDb>,
  domainId: string,
): Promise<Pick<ReceivingDomainRow, 'domain_id' | 'team_id' | 'name'> | undefined> {
  return db
    .selectFrom('receiving_domains')
    .select(['domain_id', 'team_id', 'name'])
    .where('domain_id', '=', domainId)
    .where('deleted', '=', false)
    .executeTakeFirst();
}
