import type { Response } from 'express';
import type { Role } from '../db/schema.ts';

/** Who is calling, set by the auth middleware (a bearer key) or the session middleware on `res.locals.auth`. */
export type AuthContext = {
  teamId: string;
  /** The API key; null for a signed-in user's session. */
  keyId: string | null;
  /** The signed-in user, their role in the team and their session; absent for an API key. */
  user?: { id: string; role: Role; sessionId: string };
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

/** An idempotency key the gateway holds for this request, set by the idempotency middleware. */
export type HeldKey = {
  teamId: string;
  key: string;
  /** The hash of the request, forwarded to the owner with the key. */
  hash: string;
  claimId: string;
  /** The request left for the owner: from then on only the owner's answer, or the forward's failure, settles the key. */
  forwarded: boolean;
  settled: boolean;
};

export function heldOf(res: Response): HeldKey | undefined {
  return (res.locals as { idempotency?: HeldKey }).idempotency;
}

/** The response body as sent, kept for the request log. */
export function setLoggedResponseBody(res: Response, body: unknown): void {
  (res.locals as { responseBody?: unknown }).responseBody = body;
}

export function loggedResponseBody(res: Response): unknown {
  return (res.locals as { responseBody?: unknown }).responseBody;
}

/** The id the request's log gets (made when the request arrives, so that owners can be told it). */
export function setRequestLogId(res: Response, id: string): void {
  (res.locals as { requestLogId?: string }).requestLogId = id;
}

export function requestLogIdOf(res: Response): string | undefined {
  return (res.locals as { requestLogId?: string }).requestLogId;
}
