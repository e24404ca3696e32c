import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { DomainRecordStatus, PaginationQuery } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import { RECORD_KINDS, type RecordKind } from '../domain/records.ts';
import type { DomainRecordRow, DomainRow, DomainsDb, DomainsTable } from './schema.ts';

type Db = Kysely<DomainsDb> | Transaction<DomainsDb>;

export type RecordState = { status: DomainRecordStatus; detail: string | null };
export type RecordStates = Record<RecordKind, RecordState>;

/** Inserts the domain and one `not_started` row per record kind (shown or not: capabilities can change). */
export async function insertDomain(trx: Transaction<DomainsDb>, row: Insertable<DomainsTable>): Promise<DomainRow> {
  const domain = await trx.insertInto('domains').values(row).returningAll().executeTakeFirstOrThrow();
  await trx
    .insertInto('domain_records')
    .values(
      RECORD_KINDS.map((kind) => ({
        domain_id: domain.id,
        kind,
        status: 'not_started' as const,
        detail: null,
        checked_at: null,
      })),
    )
    .execute();
  return domain;
}

export async function findDomain(db: Db, teamId: string, id: string): Promise<DomainRow | undefined> {
  return db.selectFrom('domains').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

/** Whether any team has registered that name (names are unique across teams). */
export async function domainNameTaken(db: Db, name: string): Promise<boolean> {
  const taken = await db.selectFrom('domains').select('id').where('name', '=', name).executeTakeFirst();
  return taken !== undefined;
}

/** Domains per verification status, for the `domains` gauge. */
export async function countDomainsPerStatus(db: Db): Promise<{ status: string; n: number }[]> {
  const { rows } = await sql<{
    status: string;
    n: number;
  }>`select status, count(*)::int as n from domains group by status`.execute(db);
  return rows;
}

/** The row locked until the transaction ends: checks and edits of one domain apply one at a time. */
export async function lockDomain(
  trx: Transaction<DomainsDb>,
  teamId: string,
  id: string,
): Promise<DomainRow | undefined> {
  return trx
    .selectFrom('domains')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function listDomains(db: Db, teamId: string, query: PaginationQuery): Promise<Page<DomainRow>> {
  return paginate(db.selectFrom('domains').selectAll().where('team_id', '=', teamId), query);
}

export async function recordStates(db: Db, domainId: string): Promise<RecordStates> {
  const rows: DomainRecordRow[] = await db
    .selectFrom('domain_records')
    .selectAll()
    .where('domain_id', '=', domainId)
    .execute();
  const states = Object.fromEntries(
    RECORD_KINDS.map((kind) => [kind, { status: 'not_started', detail: null }]),
  ) as RecordStates;
  for (const row of rows) states[row.kind] = { status: row.status, detail: row.detail };
  return states;
}

export async function updateDomain(
  trx: Transaction<DomainsDb>,
  id: string,
  patch: Updateable<DomainsTable>,
): Promise<DomainRow> {
  return trx
    .updateTable('domains')
    .set({ ...patch, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function saveRecordStates(
  trx: Transaction<DomainsDb>,
  domainId: string,
  states: Partial<RecordStates>,
  checkedAt: Date | null,
): Promise<void> {
  for (const [kind, state] of Object.entries(states) as [RecordKind, RecordState][]) {
    await trx
      .updateTable('domain_records')
      .set({ status: state.status, detail: state.detail, checked_at: checkedAt })
      .where('domain_id', '=', domainId)
      .where('kind', '=', kind)
      .execute();
  }
}

export async function deleteDomain(trx: Transaction<DomainsDb>, id: string): Promise<void> {
  await trx.deleteFrom('domains').where('id', '=', id).execute();
}

export async function insertCheck(
  trx: Transaction<DomainsDb>,
  check: {
    id: string;
    domain_id: string;
    trigger: 'scheduled' | 'manual';
    status: DomainRow['status'];
    findings: unknown;
  },
): Promise<void> {
  await trx
    .insertInto('domain_checks')
    .values({ ...check, findings: JSON.stringify(check.findings) })
    .execute();
}

/** Keeps the domain's `keep` most recent checks and drops older history (runs with each check; indexed). */
export async function pruneChecks(trx: Transaction<DomainsDb>, domainId: string, keep: number): Promise<void> {
  await trx
    .deleteFrom('domain_checks')
    .where('domain_id', '=', domainId)
    .where(
      'id',
      'not in',
      trx
        .selectFrom('domain_checks')
        .select('id')
        .where('domain_id', '=', domainId)
        .orderBy('checked_at', 'desc')
        .limit(keep),
    )
    .execute();
}
