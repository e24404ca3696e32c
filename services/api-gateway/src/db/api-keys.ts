import { sql, type Kysely } from 'kysely';
import { newId, paginate, type Page } from '@postline/platform';
import type { PaginationQuery } from '@postline/contracts';
import type { ApiKey, GatewayDb } from './schema.ts';
import { generateApiKeyToken } from '../domain/api-key-token.ts';

export type KeyWithTeam = Pick<
  ApiKey,
  'id' | 'team_id' | 'permission' | 'domain_id' | 'expires_at' | 'revoked_at' | 'last_used_at'
> & { access_enabled: boolean; rate_limit_per_second: number | null };

export async function insertApiKey(
  db: Kysely<GatewayDb>,
  key: Pick<ApiKey, 'id' | 'team_id' | 'name' | 'permission' | 'domain_id' | 'token_hash' | 'token_last4'>,
): Promise<ApiKey> {
  return db
    .insertInto('api_keys')
    .values({ ...key, last_used_at: null, expires_at: null, revoked_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Creates a key with a new token; the token is returned here once and only its hash is stored. */
export async function issueApiKey(
  db: Kysely<GatewayDb>,
  input: { teamId: string; name: string; permission: ApiKey['permission']; domainId: string | null },
): Promise<{ key: ApiKey; token: string }> {
  const token = generateApiKeyToken();
  const key = await insertApiKey(db, {
    id: newId(),
    team_id: input.teamId,
    name: input.name,
    permission: input.permission,
    domain_id: input.domainId,
    token_hash: token.hash,
    token_last4: token.last4,
  });
  return { key, token: token.token };
}

/** The key with that hash and its team, whatever its state; the caller decides what revoked or expired mean. */
export async function findKeyByHash(db: Kysely<GatewayDb>, tokenHash: string): Promise<KeyWithTeam | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('teams', 'teams.id', 'api_keys.team_id')
    .select([
      'api_keys.id',
      'api_keys.team_id',
      'api_keys.permission',
      'api_keys.domain_id',
      'api_keys.expires_at',
      'api_keys.revoked_at',
      'api_keys.last_used_at',
      'teams.access_enabled',
      'teams.rate_limit_per_second',
    ])
    .where('api_keys.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function listApiKeys(
  db: Kysely<GatewayDb>,
  teamId: string,
  query: PaginationQuery,
): Promise<Page<Pick<ApiKey, 'id' | 'name' | 'created_at' | 'last_used_at'>>> {
  return paginate(
    db
      .selectFrom('api_keys')
      .select(['id', 'name', 'created_at', 'last_used_at'])
      .where('team_id', '=', teamId)
      .where('revoked_at', 'is', null),
    query,
    { optional: true },
  );
}

export async function renameApiKey(db: Kysely<GatewayDb>, teamId: string, id: string, name: string): Promise<boolean> {
  const r = await db
    .updateTable('api_keys')
    .set({ name })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** Revokes a key; the row stays so that a revoked key answers 403 rather than looking unknown. */
export async function revokeApiKey(db: Kysely<GatewayDb>, teamId: string, id: string): Promise<boolean> {
  const r = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql<Date>`now()` })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function touchKeysLastUsed(db: Kysely<GatewayDb>, used: Map<string, Date>): Promise<void> {
  if (used.size === 0) return;
  const rows = [...used].map(([id, at]) => sql`(${id}::uuid, ${at}::timestamptz)`);
  await sql`
    update api_keys set last_used_at = v.at
    from (values ${sql.join(rows)}) as v(id, at)
    where api_keys.id = v.id and (api_keys.last_used_at is null or api_keys.last_used_at < v.at)`.execute(db);
}
