import type { Kysely } from 'kysely';
import { ApiError, isUuid, newId, notFound } from '@postline/platform';
import { insertApiKey } from '../db/api-keys.ts';
import type { ApiKey, GatewayDb } from '../db/schema.ts';
import { generateApiKeyToken } from '../domain/api-key-token.ts';

/** Creates a key with a new token; the token is returned here once and only its hash is stored. */
export async function issueApiKey(
  db: Kysely<GatewayDb>,
  input: {
    teamId: string;
    name: string;
    permission: ApiKey['permission'];
    domainId: string | null;
    expiresAt?: Date | null;
  },
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
    expires_at: input.expiresAt ?? null,
  });
  return { key, token: token.token };
}

export type CreateApiKeyDeps = {
  db: Kysely<GatewayDb>;
  /** Whether the team owns that domain (asked of the domain-verifier). */
  domainExists: (teamId: string, domainId: string) => Promise<boolean>;
  now: () => Date;
};

/** An expiry must be in the future: a key that could never be used is a mistake, answered 422. */
export function checkKeyExpiry(expiresAt: Date | null, now: Date): void {
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    throw new ApiError(422, 'validation_error', 'The `expires_at` must be in the future.');
  }
}

/**
 * POST /api-keys: a key limited to one domain must have `sending_access` and name a domain the team owns
 * (another team's domain and a malformed id are both "not found"); an expiry must be in the future.
 */
export async function createApiKey(
  deps: CreateApiKeyDeps,
  teamId: string,
  input: { name: string; permission: ApiKey['permission']; domainId: string | null; expiresAt: Date | null },
): Promise<{ key: ApiKey; token: string }> {
  checkKeyExpiry(input.expiresAt, deps.now());
  if (input.domainId !== null) {
    if (input.permission !== 'sending_access') {
      throw new ApiError(422, 'validation_error', 'A `domain_id` can only be set on a key with `sending_access`.');
    }
    if (!isUuid(input.domainId) || !(await deps.domainExists(teamId, input.domainId)))
      throw notFound('Domain not found');
  }
  return issueApiKey(deps.db, { teamId, ...input });
}
