import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import type { DomainClaimRow, DomainClaimsTable, DomainRow, DomainsDb } from './schema.ts';

type Db = Kysely<DomainsDb> | Transaction<DomainsDb>;

export async function insertClaim(db: Db, row: Insertable<DomainClaimsTable>): Promise<DomainClaimRow> {
  return db.insertInto('domain_claims').values(row).returningAll().executeTakeFirstOrThrow();
}

/** The team's latest claim whose domain is to get that id. */
export async function findClaim(db: Db, teamId: string, domainId: string): Promise<DomainClaimRow | undefined> {
  return db
    .selectFrom('domain_claims')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('domain_id', '=', domainId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The latest claim, locked until the transaction ends: one verification of a claim at a time. */
export async function lockClaim(
  trx: Transaction<DomainsDb>,
  teamId: string,
  domainId: string,
): Promise<DomainClaimRow | undefined> {
  return trx
    .selectFrom('domain_claims')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('domain_id', '=', domainId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
}

/** The team's pending claims of that name, newest first. */
export async function pendingClaimsOf(db: Db, teamId: string, name: string): Promise<DomainClaimRow[]> {
  return db
    .selectFrom('domain_claims')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('name', '=', name)
    .where('status', '=', 'pending')
    .orderBy('created_at', 'desc')
    .execute();
}

export async function updateClaim(
  db: Db,
  id: string,
  patch: Updateable<DomainClaimsTable>,
  now: Date,
): Promise<DomainClaimRow> {
  return db
    .updateTable('domain_claims')
    .set({ ...patch, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every other pending claim of the name (any team's) is superseded once one of them completes. */
export async function supersedeClaims(trx: Transaction<DomainsDb>, name: string, now: Date): Promise<void> {
  await trx
    .updateTable('domain_claims')
    .set({ status: 'superseded', updated_at: now })
    .where('name', '=', name)
    .where('status', '=', 'pending')
    .execute();
}

/** The domain of that name, whichever team has it, locked until the transaction ends. */
export async function lockDomainByName(trx: Transaction<DomainsDb>, name: string): Promise<DomainRow | undefined> {
  return trx.selectFrom('domains').selectAll().where('name', '=', name).forUpdate().executeTakeFirst();
}

/** The team that has registered the name, if any. */
export async function ownerOfName(db: Db, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('domains').select('team_id').where('name', '=', name).executeTakeFirst();
  return row?.team_id;
}
