// A broadcast recipient's unsubscribe link: the one-click POST target of `List-Unsubscribe` (RFC 8058) and
// the preference page that `{{{RESEND_UNSUBSCRIBE_URL}}}` becomes. Whoever holds it may change that one
// contact's subscriptions without an API key, so it is a signed token naming the team, the contact and the
// broadcast, HMAC-tagged by the platform's signed-token codec with a key of its own purpose (not the share
// links'). It does not expire: an unsubscribe link must keep working for as long as the email is read.
import { createSignedTokenCodec, uuidFromBytes, uuidToBytes } from '@postline/platform/pure';

export type UnsubscribeLink = { teamId: string; contactId: string; broadcastId: string };

export type UnsubscribeSigner = {
  sign(link: UnsubscribeLink): string;
  /** What a token names, if it is exactly what sign() wrote and its tag verifies. */
  verify(token: string): UnsubscribeLink | undefined;
};

/** The path the links are served at, on the public API's address (PUBLIC_BASE_URL). */
export const UNSUBSCRIBE_PATH = '/unsubscribe';

/** A token: 48 bytes of ids and a 16-byte tag, each base64url (64 + 1 + 22 characters). */
export const UNSUBSCRIBE_TOKEN = /^[A-Za-z0-9_-]{64}\.[A-Za-z0-9_-]{22}$/;

const PAYLOAD_BYTES = 48;

export function createUnsubscribeSigner(secretKey: string): UnsubscribeSigner {
  const codec = createSignedTokenCodec(secretKey, 'postline-unsubscribe-links', PAYLOAD_BYTES);
  return {
    sign(link) {
      const payload = Buffer.concat([
        uuidToBytes(link.teamId),
        uuidToBytes(link.contactId),
        uuidToBytes(link.broadcastId),
      ]);
      return codec.encode(payload);
    },
    verify(token) {
      if (!UNSUBSCRIBE_TOKEN.test(token)) return undefined;
      const payload = codec.decode(token);
      if (!payload) return undefined;
      return {
        teamId: uuidFromBytes(payload.subarray(0, 16)),
        contactId: uuidFromBytes(payload.subarray(16, 32)),
        broadcastId: uuidFromBytes(payload.subarray(32, 48)),
      };
    },
  };
}

/** The public URL of a token. */
export function unsubscribeUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${UNSUBSCRIBE_PATH}/${token}`;
}
