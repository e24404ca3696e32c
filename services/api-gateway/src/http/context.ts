import type { Response } from 'express';

/** Who is calling, set by the auth middleware on `res.locals.auth`. */
export type AuthContext = {
  teamId: string;
  keyId: string;
  permission: 'full_access' | 'sending_access';
  domainId: string | null;
};

export function authOf(res: Response): AuthContext {
  const auth = (res.locals as { auth?: AuthContext }).auth;
  if (!auth) throw new Error('auth middleware did not run');
  return auth;
}

export function maybeAuthOf(res: Response): AuthContext | undefined {
  return (res.locals as { auth?: AuthContext }).auth;
}

/** The hash of a request whose idempotency key the gateway holds, forwarded with the key. */
export function setIdempotencyHash(res: Response, hash: string): void {
  (res.locals as { idempotencyHash?: string }).idempotencyHash = hash;
}

export function idempotencyHashOf(res: Response): string | undefined {
  return (res.locals as { idempotencyHash?: string }).idempotencyHash;
}

/** The response body as sent, kept for the request log. */
export function setLoggedResponseBody(res: Response, body: unknown): void {
  (res.locals as { responseBody?: unknown }).responseBody = body;
}

export function loggedResponseBody(res: Response): unknown {
  return (res.locals as { responseBody?: unknown }).responseBody;
}
