import { Router } from 'express';
import { ApiRequests, PaginationQuery } from '@postline/contracts';
import { parseInput, route, teamOf } from '@postline/platform';
import type { AttachmentMeta } from '../db/received-emails.ts';
import type { ReceivedEmailRow } from '../db/receiving-tables.ts';
import {
  getAttachmentLink,
  getReceivedEmail,
  listAttachmentLinks,
  pageOfReceivedEmails,
  type AttachmentLink,
  type ReceivedEmailDeps,
} from '../use-cases/received-emails.ts';

/**
 * The team's received emails (`GET /emails/receiving[/{id}]`) and their attachments with signed download
 * links (`/emails/receiving/{id}/attachments[/{attachment_id}]`), shaped as Resend's API reference; the team
 * comes from the gateway.
 */
export function receivedEmailRoutes(deps: ReceivedEmailDeps): Router {
  const router = Router();

  route(router, '/emails/receiving', {
    get: async (req, res) => {
      const query = parseInput(PaginationQuery, req.query);
      const page = await pageOfReceivedEmails(deps, teamOf(res), query);
      res.json({
        object: 'list',
        has_more: page.has_more,
        data: page.data.map(({ email, attachments }) => ({
          id: email.id,
          to: email.to_addresses,
          from: email.from_address,
          created_at: email.created_at.toISOString(),
          subject: email.subject,
          bcc: email.bcc_addresses,
          cc: email.cc_addresses,
          reply_to: email.reply_to_addresses,
          message_id: email.message_id,
          attachments: attachments.map(attachmentItem),
        })),
      });
    },
  });

  route(router, '/emails/receiving/:id', {
    get: async (req, res) => {
      const query = parseInput(ApiRequests.ReceivedEmailQuery, req.query);
      const found = await getReceivedEmail(deps, teamOf(res), req.params.id, query.html_format ?? 'data_uri');
      const email: ReceivedEmailRow = found.email;
      res.json({
        object: 'email',
        id: email.id,
        to: email.to_addresses,
        from: email.from_address,
        created_at: email.created_at.toISOString(),
        subject: email.subject,
        html: found.html,
        html_format: found.htmlFormat,
        text: email.text,
        headers: email.headers,
        bcc: email.bcc_addresses,
        cc: email.cc_addresses,
        reply_to: email.reply_to_addresses,
        received_for: email.received_for,
        authentication: { spf: email.spf, dkim: email.dkim, dmarc: email.dmarc },
        message_id: email.message_id,
        raw: { download_url: found.raw.url, expires_at: found.raw.expiresAt.toISOString() },
        attachments: found.attachments.map(attachmentItem),
      });
    },
  });

  route(router, '/emails/receiving/:id/attachments', {
    get: async (req, res) => {
      const query = parseInput(PaginationQuery, req.query);
      const page = await listAttachmentLinks(deps, teamOf(res), req.params.id, query);
      res.json({ object: 'list', has_more: page.hasMore, data: page.data.map(attachmentBody) });
    },
  });

  route(router, '/emails/receiving/:id/attachments/:attachmentId', {
    get: async (req, res) => {
      const link = await getAttachmentLink(deps, teamOf(res), req.params.id, req.params.attachmentId);
      res.json({ object: 'attachment', ...attachmentBody(link) });
    },
  });
  return router;
}

/** An attachment as a received email lists it (no link). */
function attachmentItem(attachment: AttachmentMeta) {
  return {
    id: attachment.id,
    filename: attachment.filename,
    content_type: attachment.content_type,
    content_id: attachment.content_id,
    content_disposition: attachment.content_disposition,
    size: attachment.size,
  };
}

/** An attachment with its download link, the shape of the sent attachments' routes. */
function attachmentBody({ attachment, link }: AttachmentLink) {
  return {
    id: attachment.id,
    filename: attachment.filename,
    size: attachment.size,
    content_type: attachment.content_type,
    content_disposition: attachment.content_disposition ?? (attachment.content_id === null ? 'attachment' : 'inline'),
    content_id: attachment.content_id,
    download_url: link.url,
    expires_at: link.expiresAt.toISOString(),
  };
}
