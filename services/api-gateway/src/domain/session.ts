import { sha256Hex } from '@postline/platform/pure';

/** The session cookie's name; `__Host-` ties it to this host, over HTTPS, for the whole site. */
export const SESSION_COOKIE = '__Host-postline_session';
/** The header a session request carries its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';
/** Every dashboard-only route lives under this prefix; nothing under it is part of the Resend surface. */
export const DASHBOARD_PREFIX = '/dashboard-api';

export type SessionTimes = { last_seen_at: Date; expires_at: Date; revoked_at: Date | null };

/** Whether a stored session may be used at `now`: not revoked, before its absolute expiry, not idle too long. */
export function sessionLive(session: SessionTimes, now: Date, idleMs: number): boolean {
  return (
    !session.revoked_at &&
    session.expires_at.getTime() > now.getTime() &&
    now.getTime() - session.last_seen_at.getTime() < idleMs
  );
}

/** The session's CSRF token, derived from its secret token (so nothing more is stored, and it dies with it). */
export function csrfTokenOf(sessionToken: string): string {
  return sha256Hex(`csrf:${sessionToken}`);
}

/** One cookie's value from a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** The Set-Cookie of a session token, or (token null) of its removal. */
export function sessionCookie(token: string | null, maxAgeSeconds: number): string {
  const base = `${SESSION_COOKIE}=${token ?? ''}; Path=/; HttpOnly; Secure; SameSite=Lax`;
  return `${base}; Max-Age=${token === null ? 0 : Math.max(0, Math.floor(maxAgeSeconds))}`;
}

/** Whether a browser's Origin header (when it sent one) names the site the dashboard is served from. */
export function originAllowed(origin: string | undefined, publicBaseUrl: string): boolean {
  if (origin === undefined) return true;
  try {
    return new URL(origin).origin === new URL(publicBaseUrl).origin;
  } catch {
    return false;
  }
}

/** What only a team's admin may do (Resend's two roles): API keys and the team's members. */
export function isAdminOnlyRoute(path: string): boolean {
  return /^\/api-keys(\/|$)/.test(path) || /^\/dashboard-api\/members(\/|$)/.test(path);
}
