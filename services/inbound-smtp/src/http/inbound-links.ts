import { Router, type Response } from 'express';
import { emailContentPolicy, LINK_PATHS, route, sendDownload, setPublicLinkHeaders } from '@postline/platform';
import { openInboundLink, openInboundPreview, type ReceivedEmailDeps } from '../use-cases/received-emails.ts';

/**
 * The public side of the received emails' download links (`/inbound/{token}`), reached through the gateway
 * without an API key (it rate-limits each link): the raw message as `message/rfc822`, an attachment with its
 * own type, always as a download. What is served is a stranger's content, so it goes out sandboxed, never
 * sniffed, never cached past the link's life. The raw message's link with `?view=html` shows the message's
 * HTML instead (its inline images as data: URIs), for the dashboard's preview, with remote images only under
 * `&images=on`: the same content the link already gives, rendered where no script runs.
 */
export function inboundLinkRoutes(deps: ReceivedEmailDeps): Router {
  const router = Router();
  route(router, `${LINK_PATHS.inbound}/:token`, {
    get: async (req, res) => {
      if (req.query.view === 'html') {
        const preview = await openInboundPreview(deps, req.params.token ?? '');
        setPublicLinkHeaders(res, {
          teamId: preview.teamId,
          // A stranger's message: remote content only when asked (`images=on`).
          contentSecurityPolicy: emailContentPolicy({ remoteImages: req.query.images === 'on' }),
        });
        if (preview.html !== null) res.type('text/html; charset=utf-8').send(preview.html);
        else res.type('text/plain; charset=utf-8').send(preview.text ?? '');
        return;
      }
      // HEAD answers the size without reading the bytes.
      const download = await openInboundLink(deps, req.params.token ?? '', req.method !== 'HEAD');
      publicHeaders(res, download.teamId);
      sendDownload(req, res, download);
    },
  });
  return router;
}

/** The sandboxing headers, and the link's team for the gateway (which checks it and never passes it on). */
function publicHeaders(res: Response, teamId: string): void {
  setPublicLinkHeaders(res, { teamId, contentSecurityPolicy: "sandbox; default-src 'none'; frame-ancestors 'none'" });
}
