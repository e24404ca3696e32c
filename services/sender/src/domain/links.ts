// Public links to a sent email: a share link (`POST /emails/{id}/share`) and the download link of one of its
// attachments (`download_url`). Whoever holds the link may read what it names until it expires, without an
// API key, so a link is a signed token: the email, the attachment and the expiry, HMAC-tagged with a key
// derived from POSTLINE_SECRET_KEY. Nothing is stored; a token that is edited, expired or of the other kind
// names nothing.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { uuidFromBytes, uuidToBytes } from '@postline/platform';
import type { Refusal } from './refusal.ts';

export type LinkKind = 'share' | 'download';

export type Link = { kind: LinkKind; emailId: string; attachmentId: string | null; expiresAt: Date };

export type LinkSigner = {
  sign(link: Link): string;
  /** The link a token names, if its tag verifies, it is of `kind` and it has not expired by `now`. */
  verify(token: string, kind: LinkKind, now: Date): Link | undefined;
};

/** The path each kind of link is served at, on the public API's address (PUBLIC_BASE_URL). */
export const LINK_PATHS: Record<LinkKind, string> = { share: '/share', download: '/downloads' };

/** How long an attachment's `download_url` works. */
export const DOWNLOAD_LINK_TTL_MS = 3600_000;

/** A share link's life when `expires_in` is not given, and its longest. */
export const MAX_SHARE_TTL_MS = 48 * 3600_000;

const KINDS: LinkKind[] = ['share', 'download'];
const TAG_BYTES = 16;
const PAYLOAD_BYTES = 1 + 16 + 16 + 6; // kind, email id, attachment id (zeros: none), expiry in ms (48 bits)
const NO_ATTACHMENT = Buffer.alloc(16);

export function createLinkSigner(secretKey: string): LinkSigner {
  const key = createHash('sha256').update(`postline-public-links:${secretKey}`).digest();
  const tag = (payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, TAG_BYTES);
  return {
    sign(link) {
      const payload = Buffer.alloc(PAYLOAD_BYTES);
      payload.writeUInt8(KINDS.indexOf(link.kind), 0);
      uuidToBytes(link.emailId).copy(payload, 1);
      (link.attachmentId === null ? NO_ATTACHMENT : uuidToBytes(link.attachmentId)).copy(payload, 17);
      payload.writeUIntBE(link.expiresAt.getTime(), 33, 6);
      return `${payload.toString('base64url')}.${tag(payload).toString('base64url')}`;
    },
    verify(token, kind, now) {
      const [encoded, given, extra] = token.split('.');
      if (encoded === undefined || given === undefined || extra !== undefined) return undefined;
      const payload = Buffer.from(encoded, 'base64url');
      const givenTag = Buffer.from(given, 'base64url');
      // Buffer.from skips characters outside the alphabet: the token must be exactly what sign() wrote.
      if (payload.length !== PAYLOAD_BYTES || payload.toString('base64url') !== encoded) return undefined;
      if (givenTag.length !== TAG_BYTES || givenTag.toString('base64url') !== given) return undefined;
      if (!timingSafeEqual(tag(payload), givenTag)) return undefined;
      if (KINDS[payload.readUInt8(0)] !== kind) return undefined;
      const expiresAt = new Date(payload.readUIntBE(33, 6));
      if (expiresAt.getTime() <= now.getTime()) return undefined;
      const attachment = payload.subarray(17, 33);
      return {
        kind,
        emailId: uuidFromBytes(payload.subarray(1, 17)),
        attachmentId: attachment.equals(NO_ATTACHMENT) ? null : uuidFromBytes(attachment),
        expiresAt,
      };
    },
  };
}

/** The public URL of a signed token. */
export function linkUrl(publicBaseUrl: string, kind: LinkKind, token: string): string {
  // Appended, so that a base with a path (`https://example.com/postline`) keeps it.
  return `${publicBaseUrl.replace(/\/+$/, '')}${LINK_PATHS[kind]}/${token}`;
}

const DURATION = /^(\d{1,6})\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)$/i;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };

/** A share link's life in milliseconds, or why `expires_in` is refused. */
export type ParsedShareTtl = { ok: true; ms: number } | { ok: false; refusal: Refusal };

/**
 * A share link's `expires_in` ("10m", "2 hours", "1 day"; seconds, minutes, hours or days) in milliseconds:
 * 48 hours when absent, at most 48 hours; anything else is refused (validation_error).
 */
export function parseShareTtl(value: unknown): ParsedShareTtl {
  if (value === undefined || value === null) return { ok: true, ms: MAX_SHARE_TTL_MS };
  const match = typeof value === 'string' ? DURATION.exec(value.trim()) : null;
  if (!match) return refused('Invalid `expires_in` field: use a duration such as `10m`, `2 hours` or `1 day`.');
  const ms = Number(match[1]) * (UNIT_MS[(match[2] ?? 's').charAt(0).toLowerCase()] ?? 1000);
  if (ms <= 0) return refused('Invalid `expires_in` field: the duration must be more than zero.');
  if (ms > MAX_SHARE_TTL_MS) return refused('Invalid `expires_in` field: a share link lasts at most 48 hours.');
  return { ok: true, ms };
}

function refused(message: string): ParsedShareTtl {
  return { ok: false, refusal: { name: 'validation_error', message } };
}
