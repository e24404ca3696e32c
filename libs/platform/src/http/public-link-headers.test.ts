import { describe, expect, it } from '@jest/globals';
import type { Response } from 'express';
import { emailContentPolicy, setPublicLinkHeaders } from './public-link-headers.ts';

function headersSet(call: (res: Response) => void): Record<string, string> {
  const set: Record<string, string> = {};
  call({ set: (fields: Record<string, string>) => Object.assign(set, fields) } as unknown as Response);
  return set;
}

describe('public link headers', () => {
  it('name the team, forbid sniffing, referrers, indexing and DNS prefetching, and keep nothing cached', () => {
    expect(
      headersSet((res) => setPublicLinkHeaders(res, { teamId: 't1', contentSecurityPolicy: "default-src 'none'" })),
    ).toEqual({
      'x-postline-team-id': 't1',
      'content-security-policy': "default-src 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'private, no-store',
      'x-robots-tag': 'noindex',
      'x-dns-prefetch-control': 'off',
    });
  });

  it('set no policy for an answer that is not a page, and the cache control it is given', () => {
    const set = headersSet((res) => setPublicLinkHeaders(res, { teamId: 't1', cacheControl: 'no-cache' }));
    expect(set['content-security-policy']).toBeUndefined();
    expect(set['cache-control']).toBe('no-cache');
  });

  it("let an email's content load remote images, styles and fonts only when asked, and be framed only by the install", () => {
    const off = emailContentPolicy({ remoteImages: false });
    expect(off).toBe(
      "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; frame-ancestors 'self'",
    );
    const on = emailContentPolicy({ remoteImages: true });
    expect(on).toContain('img-src data: https: http:');
    expect(on).toContain("style-src 'unsafe-inline' https:");
    expect(on.startsWith('sandbox;')).toBe(true);
  });
});
