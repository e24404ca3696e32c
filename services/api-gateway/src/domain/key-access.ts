/** What decides whether a stored key may be used now. */
export type KeyAccess = { revoked_at: Date | null; expires_at: Date | null; access_enabled: boolean };

/** Why a key may not be used at `now` (the 403 message), or undefined when it may. */
export function keyProblem(key: KeyAccess | undefined, now: Date): string | undefined {
  if (!key) return 'API key is invalid';
  if (key.revoked_at) return 'API key is invalid';
  if (key.expires_at && key.expires_at <= now) return 'API key has expired';
  if (!key.access_enabled) return 'API key is not active: access is disabled for this team';
  return undefined;
}
