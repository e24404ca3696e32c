import { Router, type Response } from 'express';
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { PaginationQuery, PUBLIC_LINK_GONE } from '@postline/contracts';
import { isUuid, notFound, parseInput, route, TEAM_HEADER, teamOf } from '@postline/platform';
import type { SenderDb } from '../db/schema.ts';
import { attachmentContentType, attachmentFilename } from '../domain/compose.ts';
import { DOWNLOAD_LINK_TTL_MS, LINK_PATHS, linkUrl, parseShareTtl, type LinkSigner } from '../domain/links.ts';
import { findEmail } from './emails.ts';

export type EmailLinkDeps = {
  db: Kysely<SenderDb>;
  now: () => Date;
  links: LinkSigner;
  /** PUBLIC_BASE_URL: where the gateway serves the public link routes. */
  publicBaseUrl: string;
};

type AttachmentMeta = {
  id: string;
  position: number;
  filename: string | null;
  content_type: string | null;
  content_id: string | null;
  size: number;
};

/**
 * A sent email's attachments (`GET /emails/{id}/attachments[/{attachment_id}]`) with signed download links,
 * and share links (`POST /emails/{id}/share`), as in API-REFERENCE.md §1; the team comes from the gateway.
 */
export function emailLinkRoutes(deps: EmailLinkDeps): Router {
  const router = Router();
  const attachmentBody = (emailId: string, a: AttachmentMeta, now: Date) => {
    const expiresAt = new Date(now.getTime() + DOWNLOAD_LINK_TTL_MS);
    const token = deps.links.sign({ kind: 'download', emailId, attachmentId: a.id, expiresAt });
    const item = { filename: a.filename, contentType: a.content_type };
    return {
      id: a.id,
      filename: attachmentFilename(item, a.position),
      size: a.size,
      content_type: attachmentContentType(item, a.position),
      content_disposition: a.content_id === null ? 'attachment' : 'inline',
      content_id: a.content_id,
      download_url: linkUrl(deps.publicBaseUrl, 'download', token),
      expires_at: expiresAt.toISOString(),
    };
  };

  route(router, '/emails/:id/attachments', {
    get: async (req, res) => {
      const email = await findEmail(deps.db, teamOf(res), req.params.id);
      const query = parseInput(PaginationQuery, req.query);
      await assignAttachmentIds(deps.db, email.id);
      const page = await pageOfAttachments(deps.db, email.id, query);
      const now = deps.now();
      res.json({ object: 'list', has_more: page.hasMore, data: page.rows.map((a) => attachmentBody(email.id, a, now)) });
    },
  });

  route(router, '/emails/:id/attachments/:attachmentId', {
    get: async (req, res) => {
      const email = await findEmail(deps.db, teamOf(res), req.params.id);
      await assignAttachmentIds(deps.db, email.id);
      const id = req.params.attachmentId;
      const found = id && isUuid(id) ? await attachmentsOf(deps.db, email.id).where('id', '=', id).executeTakeFirst() : undefined;
      if (!found) throw notFound('Attachment not found');
      res.json({ object: 'attachment', ...attachmentBody(email.id, found, deps.now()) });
    },
  });

  route(router, '/emails/:id/share', {
    post: async (req, res) => {
      const email = await findEmail(deps.db, teamOf(res), req.params.id);
      const body = parseInput(ShareBody, req.body ?? {});
      const expiresAt = new Date(deps.now().getTime() + parseShareTtl(body.expires_in));
      const token = deps.links.sign({ kind: 'share', emailId: email.id, attachmentId: null, expiresAt });
      res.json({ object: 'email', id: email.id, url: linkUrl(deps.publicBaseUrl, 'share', token) });
    },
  });
  return router;
}

/**
 * The public side of the links (`/share/{token}`, `/downloads/{token}`), reached through the gateway without
 * an API key: the token alone names what may be read. What is served is the customer's content, so it goes
 * out sandboxed (no scripts, its own origin), never sniffed, never cached past the link's life, and an
 * attachment always as a download.
 */
export function publicLinkRoutes(deps: EmailLinkDeps): Router {
  const router = Router();
  const gone = () => notFound(PUBLIC_LINK_GONE);

  route(router, `${LINK_PATHS.share}/:token`, {
    get: async (req, res) => {
      const link = deps.links.verify(req.params.token ?? '', 'share', deps.now());
      const email =
        link && (await deps.db.selectFrom('emails').select(['team_id', 'html', 'text']).where('id', '=', link.emailId).executeTakeFirst());
      if (!email) throw gone();
      publicHeaders(res, email.team_id);
      if (email.html !== null) res.type('text/html; charset=utf-8').send(email.html);
      else res.type('text/plain; charset=utf-8').send(email.text ?? '');
    },
  });

  route(router, `${LINK_PATHS.download}/:token`, {
    get: async (req, res) => {
      const link = deps.links.verify(req.params.token ?? '', 'download', deps.now());
      // HEAD answers the size without reading the bytes.
      const head = req.method === 'HEAD';
      const found =
        link?.attachmentId &&
        (await attachmentsOf(deps.db, link.emailId)
          .select((eb) => eb.selectFrom('emails').select('team_id').whereRef('emails.id', '=', 'email_attachments.email_id').as('team_id'))
          .$if(!head, (q) => q.select('content'))
          .where('id', '=', link.attachmentId)
          .executeTakeFirst());
      if (!found || !found.team_id) throw gone();
      const item = { filename: found.filename, contentType: found.content_type };
      publicHeaders(res, found.team_id);
      res.attachment(attachmentFilename(item, found.position));
      // As the message carried it (res.type would add a charset to text types).
      res.setHeader('content-type', headerSafeType(attachmentContentType(item, found.position)));
      if (head) res.setHeader('content-length', String(found.size)).end();
      else res.send(found.content ?? Buffer.alloc(0));
    },
  });
  return router;
}

/** The sandboxing headers, and the link's team for the gateway (which checks it and never passes it on). */
function publicHeaders(res: Response, teamId: string): void {
  res.set({
    [TEAM_HEADER]: teamId,
    'content-security-policy':
      "sandbox; default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline' https:; font-src https: data:; frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'private, no-store',
    'x-robots-tag': 'noindex',
  });
}

/**
 * A content type as a header may carry it: the API accepts any parameters after `;`, and Node refuses a
 * header with characters outside visible ASCII, so such a type goes out as its bare `type/subtype`.
 */
function headerSafeType(type: string): string {
  if (/^[\t\x20-\x7e]*$/.test(type)) return type;
  const bare = type.split(';')[0]?.trim() ?? '';
  return /^[\x21-\x7e]+$/.test(bare) ? bare : 'application/octet-stream';
}

const ShareBody = z.object({ expires_in: z.unknown().optional() });

/**
 * Gives the email's attachments from before ids were kept (migration 202611291000) a random id, once: only
 * their rows are locked, where giving every old row one in the migration would have locked the table.
 */
async function assignAttachmentIds(db: Kysely<SenderDb>, emailId: string): Promise<void> {
  await db.updateTable('email_attachments').set({ id: sql<string>`gen_random_uuid()` }).where('email_id', '=', emailId).where('id', 'is', null).execute();
}

/** An email's attachments (after assignAttachmentIds), without their bytes. */
function attachmentsOf(db: Kysely<SenderDb>, emailId: string) {
  return db
    .selectFrom('email_attachments')
    .select([sql<string>`id`.as('id'), 'position', 'filename', 'content_type', 'content_id', sql<number>`octet_length(content)`.as('size')])
    .where('email_id', '=', emailId);
}

/**
 * Attachments in the order they were given, all of them when no `limit` is given (the reference's optional
 * pagination); `after`/`before` name an attachment of the same email.
 */
async function pageOfAttachments(db: Kysely<SenderDb>, emailId: string, query: PaginationQuery): Promise<{ rows: AttachmentMeta[]; hasMore: boolean }> {
  const cursor = query.after ?? query.before;
  let q = attachmentsOf(db, emailId);
  if (cursor !== undefined) {
    const at = db.selectFrom('email_attachments').select('position').where('email_id', '=', emailId).where('id', '=', cursor);
    q = q.where('position', query.after !== undefined ? '>' : '<', at);
  }
  const backwards = query.before !== undefined;
  q = q.orderBy('position', backwards ? 'desc' : 'asc');
  const { limit } = query;
  const rows = await (limit === undefined ? q : q.limit(limit + 1)).execute();
  const hasMore = limit !== undefined && rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  if (backwards) page.reverse();
  return { rows: page, hasMore };
}
