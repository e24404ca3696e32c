import type { Request, RequestHandler } from 'express';
import type { Kysely } from 'kysely';
import { ApiError, safeEqual, sha256Hex } from '@postline/platform';
import { findSession, touchSession, type SessionWithAccess } from '../db/accounts.ts';
import type { GatewayDb } from '../db/schema.ts';
import {
  cookieValue,
  CSRF_HEADER,
  csrfTokenOf,
  isAdminOnlyRoute,
  originAllowed,
  SESSION_COOKIE,
  sessionLive,
} from '../domain/session.ts';
import type { AuthContext } from './context.ts';

export type SessionDeps = {
  db: Kysely<GatewayDb>;
  /** The dashboard's site: a browser's Origin must match it. */
  publicBaseUrl: string;
  idleMs: number;
  now: () => Date;
};

// last_seen_at is written at most this often per session, not on every request.
const TOUCH_EVERY_MS = 60_000;

export type CurrentSession = SessionWithAccess & { token: string };

/** The request's session cookie token, if it carries one. */
export function sessionTokenOf(req: Request): string | undefined {
  return cookieValue(req.header('cookie'), SESSION_COOKIE);
}

/** The live session of the cookie, or 401 invalid_session; moves its idle expiry forward. */
export async function loadSession(deps: SessionDeps, token: string | undefined): Promise<CurrentSession> {
  const session = token ? await findSession(deps.db, sha256Hex(token)) : undefined;
  const now = deps.now();
  if (!token || !session || !sessionLive(session, now, deps.idleMs)) {
    throw new ApiError(401, 'invalid_session', 'Not signed in, or the session has expired. Sign in again.');
  }
  if (now.getTime() - session.last_seen_at.getTime() >= TOUCH_EVERY_MS) await touchSession(deps.db, session.id, now);
  return { ...session, token };
}

/** A browser's Origin, when sent, must be the dashboard's site (checked on every request a cookie could carry). */
export function checkOrigin(req: Request, publicBaseUrl: string): void {
  if (!originAllowed(req.header('origin'), publicBaseUrl)) {
    throw new ApiError(403, 'invalid_csrf_token', 'The request comes from another site.');
  }
}

/** A request made with a session carries the session's CSRF token in `x-csrf-token`, and a matching Origin. */
export function checkCsrf(req: Request, session: CurrentSession, publicBaseUrl: string): void {
  checkOrigin(req, publicBaseUrl);
  const sent = req.header(CSRF_HEADER);
  if (!sent || !safeEqual(sent, csrfTokenOf(session.token))) {
    throw new ApiError(
      403,
      'invalid_csrf_token',
      `Missing or invalid ${CSRF_HEADER} header: send the csrf_token of GET /dashboard-api/session.`,
    );
  }
}

/** The session's role in its current team, or 403 when the team's access is off or the user left it. */
export function teamAccessOf(session: CurrentSession): NonNullable<SessionWithAccess['role']> {
  if (!session.role) throw new ApiError(403, 'invalid_permission', 'You are no longer a member of this team.');
  if (!session.access_enabled) {
    throw new ApiError(403, 'team_access_disabled', 'Access is disabled for this team.');
  }
  return session.role;
}

/**
 * The public API with a session instead of a bearer key: a request with no Authorization header and a session
 * cookie acts as the session's user on the session's current team, with full access for an admin and everything
 * but API keys (and members) for a member. Its errors are the dashboard's (401 invalid_session, 403
 * invalid_csrf_token, team_access_disabled, invalid_permission); a request with an Authorization header is
 * left to the key middleware as it always was.
 */
export function authenticateSession(deps: SessionDeps): RequestHandler {
  return async (req, res, next) => {
    if (req.header('authorization') !== undefined) return next();
    const token = sessionTokenOf(req);
    if (!token) return next();
    const session = await loadSession(deps, token);
    checkCsrf(req, session, deps.publicBaseUrl);
    const role = teamAccessOf(session);
    if (role !== 'admin' && isAdminOnlyRoute(req.path)) {
      throw new ApiError(403, 'invalid_permission', 'Only an admin of this team may manage its API keys.');
    }
    const auth: AuthContext = {
      teamId: session.team_id,
      keyId: null,
      permission: 'full_access',
      domainId: null,
      user: { id: session.user_id, role, sessionId: session.id },
    };
    res.locals.auth = auth;
    res.locals.rateLimit = session.rate_limit_per_second;
    next();
  };
}

/** 429 rate_limit_exceeded with `retry-after`: the sign-in limits' answer. */
export function tooMany(message: string, waitMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError(429, 'rate_limit_exceeded', `${message} Try again in ${seconds} seconds.`, {
    'retry-after': String(seconds),
  });
}
