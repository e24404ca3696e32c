import { describe, expect, it } from '@jest/globals';
import { cookieValue, isAdminOnlyRoute, originAllowed, sessionCookie, sessionLive } from './session.ts';

describe('sessions', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const at = (ms: number) => new Date(now.getTime() + ms);

  it('live until revoked, idle too long or past the absolute expiry', () => {
    const live = { last_seen_at: at(-59_000), expires_at: at(1000), revoked_at: null };
    expect(sessionLive(live, now, 60_000)).toBe(true);
    expect(sessionLive({ ...live, last_seen_at: at(-60_000) }, now, 60_000)).toBe(false);
    expect(sessionLive({ ...live, expires_at: now }, now, 60_000)).toBe(false);
    expect(sessionLive({ ...live, revoked_at: at(-1) }, now, 60_000)).toBe(false);
  });

  it('reads its cookie and writes it HttpOnly, Secure and SameSite=Lax', () => {
    expect(cookieValue('a=1; __Host-postline_session=tok; b=2', '__Host-postline_session')).toBe('tok');
    expect(cookieValue('x__Host-postline_session=tok', '__Host-postline_session')).toBeUndefined();
    expect(cookieValue(undefined, 'a')).toBeUndefined();
    expect(sessionCookie('tok', 60)).toBe(
      '__Host-postline_session=tok; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=60',
    );
    expect(sessionCookie(null, 60)).toContain('Max-Age=0');
  });

  it('accepts no Origin or the site’s own, nothing else', () => {
    expect(originAllowed(undefined, 'https://mail.example.com')).toBe(true);
    expect(originAllowed('https://mail.example.com', 'https://mail.example.com/')).toBe(true);
    expect(originAllowed('https://evil.example.com', 'https://mail.example.com')).toBe(false);
    expect(originAllowed('null', 'https://mail.example.com')).toBe(false);
  });

  it('keeps API keys and members to admins', () => {
    expect(isAdminOnlyRoute('/api-keys')).toBe(true);
    expect(isAdminOnlyRoute('/api-keys/1')).toBe(true);
    expect(isAdminOnlyRoute('/dashboard-api/members')).toBe(true);
    expect(isAdminOnlyRoute('/api-keysx')).toBe(false);
    expect(isAdminOnlyRoute('/domains')).toBe(false);
  });
});
