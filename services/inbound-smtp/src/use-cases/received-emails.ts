// Reading the team's received emails (Resend's `/emails/receiving`), with key-less, expiring download links of their
// raw message and attachments, and opening such a link (the token alone names what may be read).
import type { Kysely } from 'kysely';
import { PUBLIC_LINK_GONE, type PaginationQuery } from '@postline/contracts';
import { isUuid, linkUrl, notFound, type LinkSigner, type Page } from '@postline/platform';
import { inlineImages } from '../domain/inline-images.ts';
import {
  attachmentsOf,
  findAttachment,
  findAttachmentDownload,
  findRawDownload,
  findReceivedEmail,
  findReceivedEmailById,
  inlineParts,
  listReceivedEmails,
  pageOfAttachments,
  type AttachmentMeta,
} from '../db/received-emails.ts';
import type { ReceivedEmailRow } from '../db/receiving-tables.ts';
import type { InboundDb } from '../db/schema.ts';

export type ReceivedEmailDeps = {
  db: Kysely<InboundDb>;
  now: () => Date;
  links: LinkSigner;
  /** PUBLIC_BASE_URL: where the gateway serves `/inbound/{token}`. */
  publicBaseUrl: string;
};

/** How long a raw message's or an attachment's `download_url` works. */
export const INBOUND_LINK_TTL_MS = 3600_000;

export type HtmlFormat = 'data_uri' | 'cid';

/** A download link and when it stops working. */
export type DownloadLink = { url: string; expiresAt: Date };

/** One received email as GET shows it. */
export type ReceivedEmail = {
  email: ReceivedEmailRow;
  html: string | null;
  htmlFormat: HtmlFormat;
  raw: DownloadLink;
  attachments: AttachmentMeta[];
};

/** The email id a path names; anything but a UUID names no email (404, as the sender answers). */
export function checkEmailId(id: string | undefined): string {
  if (!id || !isUuid(id)) throw notFound('Email not found');
  return id;
}

/** One received email of the team with a fresh raw download link, its html inlined as asked, or 404. */
export async function getReceivedEmail(
  deps: ReceivedEmailDeps,
  teamId: string,
  id: string | undefined,
  format: HtmlFormat,
): Promise<ReceivedEmail> {
  const email = await findEmailOf(deps, teamId, id);
  const attachments = (await attachmentsOf(deps.db, [email.id])).get(email.id) ?? [];
  let html = email.html;
  let htmlFormat = format;
  if (html !== null && format === 'data_uri' && attachments.some((a) => a.content_id !== null)) {
    const inlined = await inlinedHtml(deps, email.id, html);
    // Too large inlined: the references stay, as the reference does past 100 MB.
    if (inlined === undefined) htmlFormat = 'cid';
    else html = inlined;
  }
  return { email, html, htmlFormat, raw: link(deps, email.id, null), attachments };
}

/** A page of the team's received emails (all of them without `limit`), each with its attachments. */
export async function pageOfReceivedEmails(
  deps: ReceivedEmailDeps,
  teamId: string,
  query: PaginationQuery,
): Promise<Page<{ email: Omit<ReceivedEmailRow, 'html' | 'text' | 'headers'>; attachments: AttachmentMeta[] }>> {
  const page = await listReceivedEmails(deps.db, teamId, query);
  const attachments = await attachmentsOf(
    deps.db,
    page.data.map((email) => email.id),
  );
  return { ...page, data: page.data.map((email) => ({ email, attachments: attachments.get(email.id) ?? [] })) };
}

/** An attachment with a download link that works until `expiresAt`. */
export type AttachmentLink = { attachment: AttachmentMeta; link: DownloadLink };

/** A page of a received email's attachments (the email of the team, found first), each with a fresh link. */
export async function listAttachmentLinks(
  deps: ReceivedEmailDeps,
  teamId: string,
  emailId: string | undefined,
  query: PaginationQuery,
): Promise<{ hasMore: boolean; data: AttachmentLink[] }> {
  const email = await findEmailOf(deps, teamId, emailId);
  const page = await pageOfAttachments(deps.db, email.id, query);
  return {
    hasMore: page.has_more,
    data: page.data.map((attachment) => ({ attachment, link: link(deps, email.id, attachment.id) })),
  };
}

/** One attachment of a received email (of the team) with a fresh download link, or 404. */
export async function getAttachmentLink(
  deps: ReceivedEmailDeps,
  teamId: string,
  emailId: string | undefined,
  attachmentId: string | undefined,
): Promise<AttachmentLink> {
  const email = await findEmailOf(deps, teamId, emailId);
  const attachment =
    attachmentId && isUuid(attachmentId) ? await findAttachment(deps.db, email.id, attachmentId) : undefined;
  if (!attachment) throw notFound('Attachment not found');
  return { attachment, link: link(deps, email.id, attachment.id) };
}

/** What an inbound link serves: the raw message or an attachment, and the email's team. */
export type InboundDownload = {
  teamId: string;
  /** The raw message (`message/rfc822`) or the attachment's own type. */
  contentType: string;
  filename: string;
  size: number;
  content: Buffer | undefined;
};

/** What an inbound link names (its bytes unless `withContent` is false); 404 once it names nothing. */
export async function openInboundLink(
  deps: ReceivedEmailDeps,
  token: string,
  withContent: boolean,
): Promise<InboundDownload> {
  const link = deps.links.verify(token, 'inbound', deps.now());
  if (!link) throw notFound(PUBLIC_LINK_GONE);
  if (link.attachmentId === null) {
    const raw = await findRawDownload(deps.db, link.emailId, withContent);
    if (!raw) throw notFound(PUBLIC_LINK_GONE);
    const filename = `${link.emailId}.eml`;
    return { teamId: raw.team_id, contentType: 'message/rfc822', filename, size: raw.size, content: raw.content };
  }
  const found = await findAttachmentDownload(deps.db, link.emailId, link.attachmentId, withContent);
  if (!found) throw notFound(PUBLIC_LINK_GONE);
  return {
    teamId: found.team_id,
    contentType: found.content_type,
    filename: found.filename ?? `attachment-${found.position + 1}`,
    size: found.size,
    content: found.content,
  };
}

/**
 * The message a raw message's link names, as its preview shows it: its HTML with inline images as data:
 * URIs (the references kept when too large), or its text. 404 for an attachment's link or a link that names
 * nothing any more.
 */
export async function openInboundPreview(
  deps: ReceivedEmailDeps,
  token: string,
): Promise<{ teamId: string; html: string | null; text: string | null }> {
  const link = deps.links.verify(token, 'inbound', deps.now());
  if (!link || link.attachmentId !== null) throw notFound(PUBLIC_LINK_GONE);
  const email = await findReceivedEmailById(deps.db, link.emailId);
  if (!email) throw notFound(PUBLIC_LINK_GONE);
  const html = email.html === null ? null : await inlinedHtml(deps, email.id, email.html);
  return { teamId: email.team_id, html: html ?? email.html, text: email.text };
}

/** An email's HTML with its inline images as data: URIs; undefined when inlined it would be too large. */
async function inlinedHtml(deps: ReceivedEmailDeps, emailId: string, html: string): Promise<string | undefined> {
  const parts = await inlineParts(deps.db, emailId);
  if (parts.length === 0) return html;
  return inlineImages(
    html,
    parts.map((part) => ({ contentId: part.content_id, contentType: part.content_type, content: part.content })),
  );
}

async function findEmailOf(deps: ReceivedEmailDeps, teamId: string, id: string | undefined): Promise<ReceivedEmailRow> {
  const email = await findReceivedEmail(deps.db, teamId, checkEmailId(id));
  if (!email) throw notFound('Email not found');
  return email;
}

function link(deps: ReceivedEmailDeps, emailId: string, attachmentId: string | null): DownloadLink {
  const expiresAt = new Date(deps.now().getTime() + INBOUND_LINK_TTL_MS);
  const token = deps.links.sign({ kind: 'inbound', emailId, attachmentId, expiresAt });
  return { url: linkUrl(deps.publicBaseUrl, 'inbound', token), expiresAt };
}
