import { Router, type Response } from 'express';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import {
  emailContentPolicy,
  LINK_PATHS,
  parseInput,
  route,
  sendDownload,
  setPublicLinkHeaders,
  teamOf,
} from '@postline/platform';
import {
  getAttachmentLink,
  listAttachmentLinks,
  openDownloadLink,
  openShareLink,
  shareEmail,
  type AttachmentLink,
  type EmailLinkDeps,
} from '../use-cases/email-links.ts';
import { getEmail } from '../use-cases/read-emails.ts';

/**
 * A sent email's attachments (`GET /emails/{id}/attachments[/{attachment_id}]`) with signed download links,
 * and share links (`POST /emails/{id}/share`), as in Resend's API reference; the team comes from the gateway.
 */
export function emailLinkRoutes(deps: EmailLinkDeps): Router {
  const router = Router();

  route(router, '/emails/:id/attachments', {
    get: async (req, res) => {
      const email = await getEmail(deps.db, teamOf(res), req.params.id);
      const query = parseInput(PaginationQuery, req.query);
      const page = await listAttachmentLinks(deps, email.id, query);
      res.json({ object: 'list', has_more: page.hasMore, data: page.data.map(attachmentBody) });
    },
  });

  route(router, '/emails/:id/attachments/:attachmentId', {
    get: async (req, res) => {
      const email = await getEmail(deps.db, teamOf(res), req.params.id);
      const link = await getAttachmentLink(deps, email.id, req.params.attachmentId);
      res.json({ object: 'attachment', ...attachmentBody(link) });
    },
  });

  route(router, '/emails/:id/share', {
    post: async (req, res) => {
      const email = await getEmail(deps.db, teamOf(res), req.params.id);
      const body = parseInput(ApiRequests.ShareEmailBody, req.body ?? {});
      res.json({ object: 'email', id: email.id, url: shareEmail(deps, email.id, body.expires_in) });
    },
  });
  return router;
}

function attachmentBody(link: AttachmentLink) {
  const { attachment } = link;
  return {
    id: attachment.id,
    filename: link.filename,
    size: attachment.size,
    content_type: link.contentType,
    content_disposition: attachment.content_id === null ? 'attachment' : 'inline',
    // The reference types content_id as a string: an attachment that has none leaves the field out.
    ...(attachment.content_id === null ? {} : { content_id: attachment.content_id }),
    download_url: link.downloadUrl,
    expires_at: link.expiresAt.toISOString(),
  };
}

/**
 * The public side of the links (`/share/{token}`, `/downloads/{token}`), reached through the gateway without
 * an API key: the token alone names what may be read. What is served is the customer's content, so it goes
 * out sandboxed (no scripts, its own origin), never sniffed, never cached past the link's life, and an
 * attachment always as a download.
 */
export function publicLinkRoutes(deps: EmailLinkDeps): Router {
  const router = Router();

  route(router, `${LINK_PATHS.share}/:token`, {
    get: async (req, res) => {
      const email = await openShareLink(deps, req.params.token ?? '');
      // `?images=blocked`: no remote image is fetched (a preview that asks before telling senders it was read).
      publicHeaders(res, email.team_id, { remoteImages: req.query.images !== 'blocked' });
      if (email.html !== null) res.type('text/html; charset=utf-8').send(email.html);
      else res.type('text/plain; charset=utf-8').send(email.text ?? '');
    },
  });

  route(router, `${LINK_PATHS.download}/:token`, {
    get: async (req, res) => {
      // HEAD answers the size without reading the bytes.
      const download = await openDownloadLink(deps, req.params.token ?? '', req.method !== 'HEAD');
      publicHeaders(res, download.teamId, { remoteImages: false });
      sendDownload(req, res, download);
    },
  });
  return router;
}

/**
 * The sandboxing headers, and the link's team for the gateway (which checks it and never passes it on). Only
 * the install's own pages may frame it (the dashboard's preview of an email).
 */
function publicHeaders(res: Response, teamId: string, opts: { remoteImages: boolean }): void {
  setPublicLinkHeaders(res, { teamId, contentSecurityPolicy: emailContentPolicy(opts) });
}
