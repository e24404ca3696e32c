// The public links the sender issues and the gateway serves without a key (`/share/{token}`,
// `/downloads/{token}`). The sender signs and checks tokens; the gateway only needs to know their shape and
// which part of a token names what it links to, so that its per-link rate limit counts one email or
// attachment once however many tokens (each with its own expiry) were issued for it.

/** A token as issued: a base64url payload, a dot, a base64url tag. */
export const PUBLIC_LINK_PATH = /^\/(share|downloads)\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The payload's first 33 bytes are the link's kind, email id and attachment id (its last 6 the expiry), so
 * its first 44 base64url characters (3 bytes per 4 characters, no padding at that boundary) name the link.
 */
const PUBLIC_LINK_IDENTITY_CHARS = 44;

/** What a public link names, without its expiry or tag: `downloads/<first 44 characters>`. */
export function publicLinkIdentity(path: string): string | undefined {
  const match = PUBLIC_LINK_PATH.exec(path);
  if (!match) return undefined;
  const token = path.slice(match[1]!.length + 2);
  return `${match[1]}/${token.slice(0, PUBLIC_LINK_IDENTITY_CHARS)}`;
}

/** The one answer (404 `not_found`) to a link that names nothing: edited, expired, or of a disabled team. */
export const PUBLIC_LINK_GONE = 'This link is not valid or has expired.';
