// The headers of whatever is served on a public link (share and download links, received emails' links,
// tracking, unsubscribe pages): reached through the gateway without an API key, a token alone naming what
// is served. One place, so that the services serving such links cannot drift apart.
import type { Response } from 'express';
import { TEAM_HEADER } from './internal.ts';

export type PublicLinkHeaders = {
  /** The link's team, for the gateway, which checks it and never passes it on. */
  teamId: string;
  /** What the page may load and do; none for an answer that is not a page (a pixel, a redirect). */
  contentSecurityPolicy?: string;
  /** Default `private, no-store`: never kept past the link's life. */
  cacheControl?: string;
};

/**
 * Sets a public link's headers: its team for the gateway, never sniffed, no referrer sent on, never indexed,
 * not cached, no DNS prefetching, and the page's content security policy.
 *
 * @example
 * setPublicLinkHeaders(res, { teamId, contentSecurityPolicy: "sandbox; default-src 'none'" });
 */
export function setPublicLinkHeaders(res: Response, headers: PublicLinkHeaders): void {
  res.set({
    [TEAM_HEADER]: headers.teamId,
    ...(headers.contentSecurityPolicy === undefined
      ? {}
      : { 'content-security-policy': headers.contentSecurityPolicy }),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': headers.cacheControl ?? 'private, no-store',
    'x-robots-tag': 'noindex',
    // No name the page mentions is looked up ahead (a `<link rel=dns-prefetch>` would tell its owner).
    'x-dns-prefetch-control': 'off',
  });
}

/**
 * The policy of an email's content shown on a public link (a sent email's share page, a received email's
 * preview): sandboxed (no script runs, an origin of its own), framed only by the install's own pages (the
 * dashboard), inline styles and images, and remote images, style sheets and fonts only when `remoteImages`
 * (loading them tells whoever serves them that the email was opened).
 */
export function emailContentPolicy(opts: { remoteImages: boolean }): string {
  const remote = opts.remoteImages ? ' https: http:' : '';
  const secure = opts.remoteImages ? ' https:' : '';
  return `sandbox; default-src 'none'; img-src data:${remote}; style-src 'unsafe-inline'${secure}; font-src data:${secure}; frame-ancestors 'self'`;
}
