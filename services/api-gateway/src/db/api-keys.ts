import { sql, type Kysely } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { paginate, type Page } from '@postline/platform';
import type { ApiKey, GatewayDb } from './schema.ts';

/** The channel the api_keys and teams triggers notify on (migration 202611230900). */
export const keyChangeChannel = (schema: string) => `api_keys_${schema}`;

export type KeyWithTeam = Pick<
  ApiKey,
  'id' | 'team_id' | 'permission' | 'domain_id' | 'expires_at' | 'revoked_at' | 'last_used_at'
> & { access_enabled: boolean; rate_limit_per_second: number | null };

export async function insertApiKey(
  db: Kysely<GatewayDb>,
  key: Pick<
    ApiKey,
    'id' | 'team_id' | 'name' | 'permission' | 'domain_id' | 'token_hash' | 'token_last4' | 'expires_at'
  >,
): Promise<ApiKey> {
  return db
    .insertInto('api_keys')
    .values({ ...key, last_used_at: null, revoked_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The key with that hash and its team, whatever its state; the caller decides what revoked or expired mean. */
export async function findApiKeyWithTeam(db: Kysely<GatewayDb>, tokenHash: string): Promise<KeyWithTeam | undefined> {
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
): Promise<
  Page<Pick<ApiKey, 'id' | 'name' | 'created_at' | 'last_used_at' | 'permission' | 'domain_id' | 'expires_at'>>
> {
  return paginate(
    db
      .selectFrom('api_keys')
      .select(['id', 'name', 'created_at', 'last_used_at', 'permission', 'domain_id', 'expires_at'])
      .where('team_id', '=', teamId)
      .where('revoked_at', 'is', null),
    query,
  );
}

export async function renameApiKey(db: Kysely<GatewayDb>, teamId: string, id: string, name: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ name })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Revokes a key; the row stays so that a revoked key answers 403 rather than looking unknown. */
export async function revokeApiKey(db: Kysely<GatewayDb>, teamId: string, id: string): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql<Date>`now()` })
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Sets `last_used_at` of each key to its time in `used`, never moving it back. */
export async function touchKeysLastUsed(db: Kysely<GatewayDb>, used: Map<string, Date>): Promise<void> {
  if (used.size === 0) return;
  const rows = [...used].map(([id, at]) => sql`(${id}::uuid, ${at}::timestamptz)`);
  await sql`
    update api_keys set last_used_at = used.at
    from (values ${sql.join(rows)}) as used(id, at)
    where api_keys.id = used.id and (api_keys.last_used_at is null or api_keys.last_used_at < used.at)`.execute(db);
}
