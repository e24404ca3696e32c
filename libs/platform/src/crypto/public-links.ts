// Public links: whoever holds one may read what it names until it expires, without an API key, so a link is
// a signed token: its kind, an email, an attachment and the expiry, HMAC-tagged with a key derived from
// POSTLINE_SECRET_KEY. Nothing is stored; a token that is edited, expired or of another kind names nothing.
// The sender issues share and download links of sent emails, the inbound-smtp links of received emails; one
// table of kinds keeps their tokens apart (a token of one kind never opens another).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { uuidFromBytes, uuidToBytes } from '../ids/ids.ts';

/**
 * Every kind, by its byte in the token: the position is part of every token issued, so a kind keeps its
 * index forever and new kinds go at the end. `inbound`: a received email's raw message (no attachment) or
 * one of its attachments.
 */
const KINDS = ['share', 'download', 'inbound'] as const;

export type LinkKind = (typeof KINDS)[number];

export type Link = { kind: LinkKind; emailId: string; attachmentId: string | null; expiresAt: Date };

export type LinkSigner = {
  sign(link: Link): string;
  /** The link a token names, if its tag verifies, it is of `kind` and it has not expired by `now`. */
  verify(token: string, kind: LinkKind, now: Date): Link | undefined;
};

/** The path each kind of link is served at, on the public API's address (PUBLIC_BASE_URL). */
export const LINK_PATHS: Record<LinkKind, string> = { share: '/share', download: '/downloads', inbound: '/inbound' };

const PAYLOAD_BYTES = 1 + 16 + 16 + 6; // kind, email id, attachment id (zeros: none), expiry in ms (48 bits)
const NO_ATTACHMENT = Buffer.alloc(16);

/**
 * The codec of a signed token: a payload of a fixed size and its 16-byte HMAC-SHA256 tag, each base64url,
 * joined by a dot. The key is derived from POSTLINE_SECRET_KEY and the token's purpose, so that a token of
 * one purpose never verifies as another's.
 */
export type SignedTokenCodec = {
  encode(payload: Buffer): string;
  /** The payload of a token that is exactly what encode() wrote and whose tag verifies. */
  decode(token: string): Buffer | undefined;
};

const TAG_BYTES = 16;

/**
 * @example
 * const codec = createSignedTokenCodec(config.POSTLINE_SECRET_KEY, 'postline-unsubscribe-links', 48);
 * codec.decode(codec.encode(payload)); // payload
 */
export function createSignedTokenCodec(secretKey: string, purpose: string, payloadBytes: number): SignedTokenCodec {
  const key = createHash('sha256').update(`${purpose}:${secretKey}`).digest();
  const tag = (payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, TAG_BYTES);
  return {
    encode(payload) {
      return `${payload.toString('base64url')}.${tag(payload).toString('base64url')}`;
    },
    decode(token) {
      const [encoded, given, extra] = token.split('.');
      if (encoded === undefined || given === undefined || extra !== undefined) return undefined;
      const payload = Buffer.from(encoded, 'base64url');
      const givenTag = Buffer.from(given, 'base64url');
      // Buffer.from skips characters outside the alphabet: the token must be exactly what encode() wrote.
      if (payload.length !== payloadBytes || payload.toString('base64url') !== encoded) return undefined;
      if (givenTag.length !== TAG_BYTES || givenTag.toString('base64url') !== given) return undefined;
      return timingSafeEqual(tag(payload), givenTag) ? payload : undefined;
    },
  };
}

/**
 * @example
 * const links = createLinkSigner(config.POSTLINE_SECRET_KEY);
 * const token = links.sign({ kind: 'download', emailId, attachmentId, expiresAt });
 * links.verify(token, 'download', new Date()); // the link, until expiresAt
 */
export function createLinkSigner(secretKey: string): LinkSigner {
  const codec = createSignedTokenCodec(secretKey, 'postline-public-links', PAYLOAD_BYTES);
  return {
    sign(link) {
      const payload = Buffer.alloc(PAYLOAD_BYTES);
      payload.writeUInt8(KINDS.indexOf(link.kind), 0);
      uuidToBytes(link.emailId).copy(payload, 1);
      (link.attachmentId === null ? NO_ATTACHMENT : uuidToBytes(link.attachmentId)).copy(payload, 17);
      payload.writeUIntBE(link.expiresAt.getTime(), 33, 6);
      return codec.encode(payload);
    },
    verify(token, kind, now) {
      const payload = codec.decode(token);
      if (!payload) return undefined;
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
