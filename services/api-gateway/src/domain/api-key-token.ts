import { randomToken, sha256Hex } from '@postline/platform/pure';

export const TOKEN_PREFIX = 'pl_';

/** A new API key: `pl_` + 256 random bits. Only its SHA-256 is stored. */
export function generateApiKeyToken(): { token: string; hash: string; last4: string } {
  const token = `${TOKEN_PREFIX}${randomToken(32)}`;
  return { token, hash: sha256Hex(token), last4: token.slice(-4) };
}

/** The bearer token of an Authorization header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  return match?.[1];
}
