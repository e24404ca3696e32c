// The public links the sender issues and the gateway serves without a key (`/share/{token}`,
// `/downloads/{token}`, the inbound-smtp's `/inbound/{token}`, and a broadcast recipient's `/unsubscribe/{token}`). The sender signs and checks tokens; the gateway only needs to know their shape and
// which part of a token names what it links to, so that its per-link rate limit counts one email or
// attachment once however many tokens (each with its own expiry) were issued for it.

/** A token as issued: a base64url payload, a dot, a base64url tag. */
export const PUBLIC_LINK_PATH = /^\/(share|downloads)\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * A received email's download link (its raw MIME or one of its attachments), issued and checked by the
 * inbound-smtp with the same token layout as the sender's download links.
 */
export const INBOUND_LINK_PATH = /^\/(inbound)\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The payload's first 33 bytes are the link's kind, email id and attachment id (its last 6 the expiry), so
 * its first 44 base64url characters (3 bytes per 4 characters, no padding at that boundary) name the link.
 */
const PUBLIC_LINK_IDENTITY_CHARS = 44;

/**
 * A broadcast recipient's unsubscribe link (the one-click POST target and the preference page): a 48-byte
 * payload (team, contact and broadcast ids) and a 16-byte tag, each base64url, exactly as the sender signs it.
 */
export const UNSUBSCRIBE_LINK_PATH = /^\/unsubscribe\/([A-Za-z0-9_-]{64})\.[A-Za-z0-9_-]{22}$/;

/** The largest body an unsubscribe link takes (the one-click POST or the preference page's form), in bytes. */
export const UNSUBSCRIBE_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The team an unsubscribe link's payload names (its first 16 bytes), as a UUID, or undefined for another
 * path. Not verified: the owner checks the tag. The gateway reads it before forwarding a POST, so that a
 * disabled team's link changes nothing.
 */
export function unsubscribeLinkTeam(path: string): string | undefined {
  const match = UNSUBSCRIBE_LINK_PATH.exec(path);
  if (!match) return undefined;
  return uuidOfBytes(Buffer.from(match[1]!, 'base64url').subarray(0, 16));
}

function uuidOfBytes(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * An open pixel (`/o/{token}`) or a tracking redirect (`/c/{token}`) on a domain's tracking host: a token
 * sealed with AES-256-GCM (services/sender/src/engagement/domain/tracking-links.ts), base64url.
 */
export const TRACKING_LINK_PATH = /^\/(o|c)\/([A-Za-z0-9_-]{60,4096})$/;

/**
 * The sender's answer to whether a host is a verified tracking host (`GET /tracking-hosts/{host}`: 200 or
 * 404), asked by the gateway's `/internal/tls-ask` for the TLS proxy's on-demand certificates.
 */
export const TRACKING_HOSTS_PATH = '/tracking-hosts';

/**
 * A signup form's hosted page (`/f/{public_id}`: GET shows it, POST submits it). The public id is 32 bytes,
 * base64url: the team's id (so that the gateway knows the team before it forwards a submit, as for an
 * unsubscribe link) and 16 random bytes (so that it cannot be guessed). The owner looks the whole id up.
 */
export const SIGNUP_FORM_PATH = /^\/f\/([A-Za-z0-9_-]{43})$/;

/**
 * A signup's confirmation link (`/f/{public_id}/confirm/{token}`: GET shows a button, POST confirms), its
 * token a 38-byte payload (team, signup, expiry) and a 16-byte tag, each base64url, as the sender signs it.
 */
export const SIGNUP_CONFIRM_PATH = /^\/f\/([A-Za-z0-9_-]{43})\/confirm\/([A-Za-z0-9_-]{51})\.[A-Za-z0-9_-]{22}$/;

/** The team a signup form's page or confirmation link names (its public id's first 16 bytes); not verified. */
export function signupFormTeam(path: string): string | undefined {
  const match = SIGNUP_FORM_PATH.exec(path) ?? SIGNUP_CONFIRM_PATH.exec(path);
  if (!match) return undefined;
  return uuidOfBytes(Buffer.from(match[1]!, 'base64url').subarray(0, 16));
}

/** The public id of a signup form's page or of a confirmation link's form, else undefined. */
export function signupFormPublicId(path: string): string | undefined {
  return (SIGNUP_FORM_PATH.exec(path) ?? SIGNUP_CONFIRM_PATH.exec(path))?.[1];
}

/**
 * What a public link names, without its expiry or tag: `downloads/<first 44 characters>`, or for an
 * unsubscribe link `unsubscribe/<its payload>` (one recipient of one broadcast; it has no expiry), or for a
 * tracking link `o|c/<its last 22 characters>`, for a signup form `f/<public id>` (its confirmation links
 * `f/<public id>/confirm/<payload>`) (a link's token is sealed once, when its email is composed,
 * and is the same on every hit; its end is the GCM tag, unique to it).
 */
export function publicLinkIdentity(path: string): string | undefined {
  const unsubscribe = UNSUBSCRIBE_LINK_PATH.exec(path);
  if (unsubscribe) return `unsubscribe/${unsubscribe[1]}`;
  const confirm = SIGNUP_CONFIRM_PATH.exec(path);
  if (confirm) return `f/${confirm[1]}/confirm/${confirm[2]}`;
  const form = SIGNUP_FORM_PATH.exec(path);
  if (form) return `f/${form[1]}`;
  const tracking = TRACKING_LINK_PATH.exec(path);
  if (tracking) return `${tracking[1]}/${tracking[2]!.slice(-22)}`;
  const match = PUBLIC_LINK_PATH.exec(path) ?? INBOUND_LINK_PATH.exec(path);
  if (!match) return undefined;
  const token = path.slice(match[1]!.length + 2);
  return `${match[1]}/${token.slice(0, PUBLIC_LINK_IDENTITY_CHARS)}`;
}

/** The one answer (404 `not_found`) to a link that names nothing: edited, expired, or of a disabled team. */
export const PUBLIC_LINK_GONE = 'This link is not valid or has expired.';
