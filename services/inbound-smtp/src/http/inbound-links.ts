import { Router, type Response } from 'express';
import { LINK_PATHS, route, TEAM_HEADER } from '@postline/platform';
import { openInboundLink, type ReceivedEmailDeps } from '../use-cases/received-emails.ts';

/**
 * The public side of the received emails' download links (`/inbound/{token}`), reached through the gateway
 * without an API key (it rate-limits each link): the raw message as `message/rfc822`, an attachment with its
 * own type, always as a download. What is served is a stranger's content, so it goes out sandboxed, never
 * sniffed, never cached past the link's life.
 */
export function inboundLinkRoutes(deps: ReceivedEmailDeps): Router {
  const router = Router();
  route(router, `${LINK_PATHS.inbound}/:token`, {
    get: async (req, res) => {
      // HEAD answers the size without reading the bytes.
      const head = req.method === 'HEAD';
      const download = await openInboundLink(deps, req.params.token ?? '', !head);
      publicHeaders(res, download.teamId);
      // Content-Disposition built by express (RFC 6266 quoting, a non-ASCII name as filename*).
      res.attachment(download.filename);
      res.setHeader('content-type', headerSafeType(download.contentType));
      if (head) res.setHeader('content-length', String(download.size)).end();
      else res.send(download.content ?? Buffer.alloc(0));
    },
  });
  return router;
}

/** The sandboxing headers, and the link's team for the gateway (which checks it and never passes it on). */
function publicHeaders(res: Response, teamId: string): void {
  res.set({
    [TEAM_HEADER]: teamId,
    'content-security-policy': "sandbox; default-src 'none'; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'private, no-store',
    'x-robots-tag': 'noindex',
  });
}

/**
 * A content type as a header may carry it: a received part may name any type with any parameters, and Node
 * refuses a header with characters outside visible ASCII, so such a type goes out as its bare `type/subtype`.
 */
function headerSafeType(type: string): string {
  if (/^[\t\x20-\x7e]*$/.test(type)) return type;
  const bare = type.split(';')[0]?.trim() ?? '';
  return /^[\x21-\x7e]+$/.test(bare) ? bare : 'application/octet-stream';
}
