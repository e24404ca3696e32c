import type { RequestHandler } from 'express';
import { ApiError, sha256Hex } from '@postline/platform';
import type { KeyWithTeam } from '../db/api-keys.ts';
import { bearerToken } from '../domain/api-key-token.ts';
import { keyProblem } from '../domain/key-access.ts';
import { isSendingAccessRoute } from '../domain/routes.ts';
import { maybeAuthOf, type AuthContext } from './context.ts';

export type AuthDeps = {
  /** The key with that token hash, whatever its state (the key cache). */
  findKey: (tokenHash: string) => Promise<KeyWithTeam | undefined>;
  /** Records that a key was used; written behind the request. */
  markUsed: (keyId: string, at: Date) => void;
  now: () => Date;
};

/**
 * No key → 401 missing_api_key; unknown, revoked or expired key, or a team without access → 403
 * invalid_api_key; a sending_access key outside the sending routes (and the relay's key check) → 401
 * restricted_api_key.
 */
export function authenticate(deps: AuthDeps): RequestHandler {
  return async (req, res, next) => {
    // A signed-in user's session was accepted instead (session-auth.ts).
    if (maybeAuthOf(res)) return next();
    const token = bearerToken(req.header('authorization'));
    if (!token)
      throw new ApiError(
        401,
        'missing_api_key',
        'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY',
      );
    const key = await deps.findKey(sha256Hex(token));
    const now = deps.now();
    const problem = keyProblem(key, now);
    if (problem || !key) throw new ApiError(403, 'invalid_api_key', problem ?? 'API key is invalid');
    if (key.permission === 'sending_access' && !isSendingAccessRoute(req.method, req.path)) {
      throw new ApiError(401, 'restricted_api_key', 'This API key is restricted to only send emails');
    }
    const auth: AuthContext = {
      teamId: key.team_id,
      keyId: key.id,
      permission: key.permission,
      domainId: key.domain_id,
    };
    res.locals.auth = auth;
    res.locals.rateLimit = key.rate_limit_per_second;
    deps.markUsed(key.id, now);
    next();
  };
}
