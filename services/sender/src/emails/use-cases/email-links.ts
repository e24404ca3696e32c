// Links to a sent email: signed download links of its attachments and share links of the email itself,
// minted for the team, and opened by whoever holds one (the token alone names what may be read).
import type { Kysely } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { PUBLIC_LINK_GONE } from '@postline/contracts';
import { isUuid, linkUrl, notFound, type LinkSigner } from '@postline/platform';
import {
  assignAttachmentIds,
  findAttachment,
  findDownload,
  pageOfAttachments,
  type AttachmentMeta,
} from '../db/email-attachments.ts';
import { findSharedEmail } from '../db/emails.ts';
import type { SenderDb } from '../../db/schema.ts';
import { attachmentContentType, attachmentFilename, refusalError } from '../../message/index.ts';
import { DOWNLOAD_LINK_TTL_MS, parseShareTtl } from '../domain/link-lifetimes.ts';

export type EmailLinkDeps = {
  db: Kysely<SenderDb>;
  now: () => Date;
  links: LinkSigner;
  /** PUBLIC_BASE_URL: where the gateway serves the public link routes. */
  publicBaseUrl: string;
};

/** An attachment with the name and type it is served under, and a download link that works until `expiresAt`. */
export type AttachmentLink = {
  attachment: AttachmentMeta;
  filename: string;
  contentType: string;
  downloadUrl: string;
  expiresAt: Date;
};

/** A page of an email's attachments (an email of the team, found first), each with a fresh download link. */
export async function listAttachmentLinks(
  deps: EmailLinkDeps,
  emailId: string,
  query: PaginationQuery,
): Promise<{ hasMore: boolean; data: AttachmentLink[] }> {
  await assignAttachmentIds(deps.db, emailId);
  const page = await pageOfAttachments(deps.db, emailId, query);
  const now = deps.now();
  return { hasMore: page.hasMore, data: page.rows.map((attachment) => attachmentLink(deps, emailId, attachment, now)) };
}

/** One attachment of an email (of the team, found first) with a fresh download link, or 404. */
export async function getAttachmentLink(
  deps: EmailLinkDeps,
  emailId: string,
  attachmentId: string | undefined,
): Promise<AttachmentLink> {
  await assignAttachmentIds(deps.db, emailId);
  const found = attachmentId && isUuid(attachmentId) ? await findAttachment(deps.db, emailId, attachmentId) : undefined;
  if (!found) throw notFound('Attachment not found');
  return attachmentLink(deps, emailId, found, deps.now());
}

/** A share link of an email (of the team, found first) that works for `expiresIn` (48 hours when absent). */
export function shareEmail(deps: EmailLinkDeps, emailId: string, expiresIn: unknown): string {
  const ttl = parseShareTtl(expiresIn);
  if (!ttl.ok) throw refusalError(ttl.refusal);
  const expiresAt = new Date(deps.now().getTime() + ttl.ms);
  const token = deps.links.sign({ kind: 'share', emailId, attachmentId: null, expiresAt });
  return linkUrl(deps.publicBaseUrl, 'share', token);
}

/** What a share link shows (the email's html, else its text) and the email's team; 404 once it names nothing. */
export async function openShareLink(
  deps: EmailLinkDeps,
  token: string,
): Promise<{ team_id: string; html: string | null; text: string | null }> {
  const link = deps.links.verify(token, 'share', deps.now());
  const email = link && (await findSharedEmail(deps.db, link.emailId));
  if (!email) throw linkGone();
  return email;
}

/** An attachment a download link names: its bytes unless `withContent` is false (only its size is wanted). */
export type Download = {
  teamId: string;
  filename: string;
  contentType: string;
  size: number;
  content: Buffer | undefined;
};

/** What a download link serves, and the email's team; 404 once it names nothing. */
export async function openDownloadLink(deps: EmailLinkDeps, token: string, withContent: boolean): Promise<Download> {
  const link = deps.links.verify(token, 'download', deps.now());
  const found = link?.attachmentId && (await findDownload(deps.db, link.emailId, link.attachmentId, withContent));
  if (!found || !found.team_id) throw linkGone();
  const item = { filename: found.filename, contentType: found.content_type };
  return {
    teamId: found.team_id,
    filename: attachmentFilename(item, found.position),
    contentType: attachmentContentType(item, found.position),
    size: found.size,
    content: found.content,
  };
}

function linkGone() {
  return notFound(PUBLIC_LINK_GONE);
}

function attachmentLink(deps: EmailLinkDeps, emailId: string, attachment: AttachmentMeta, now: Date): AttachmentLink {
  const expiresAt = new Date(now.getTime() + DOWNLOAD_LINK_TTL_MS);
  const token = deps.links.sign({ kind: 'download', emailId, attachmentId: attachment.id, expiresAt });
  const item = { filename: attachment.filename, contentType: attachment.content_type };
  return {
    attachment,
    filename: attachmentFilename(item, attachment.position),
    contentType: attachmentContentType(item, attachment.position),
    downloadUrl: linkUrl(deps.publicBaseUrl, 'download', token),
    expiresAt,
  };
}
