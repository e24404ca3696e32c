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
 * not cached, and the page's content security policy.
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
  });
}
