import { describe, expect, it } from '@jest/globals';
import type { Response } from 'express';
import { setPublicLinkHeaders } from './public-link-headers.ts';

function headersSet(call: (res: Response) => void): Record<string, string> {
  const set: Record<string, string> = {};
  call({ set: (fields: Record<string, string>) => Object.assign(set, fields) } as unknown as Response);
  return set;
}

describe('public link headers', () => {
  it('name the team, forbid sniffing, referrers and indexing, and keep nothing cached', () => {
    expect(
      headersSet((res) => setPublicLinkHeaders(res, { teamId: 't1', contentSecurityPolicy: "default-src 'none'" })),
    ).toEqual({
      'x-postline-team-id': 't1',
      'content-security-policy': "default-src 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'private, no-store',
      'x-robots-tag': 'noindex',
    });
  });

  it('set no policy for an answer that is not a page, and the cache control it is given', () => {
    const set = headersSet((res) => setPublicLinkHeaders(res, { teamId: 't1', cacheControl: 'no-cache' }));
    expect(set['content-security-policy']).toBeUndefined();
    expect(set['cache-control']).toBe('no-cache');
  });
});
