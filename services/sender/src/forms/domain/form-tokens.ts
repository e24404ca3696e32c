// The signed values of a hosted form, each HMAC-tagged by the platform's signed-token codec with a key of
// its own purpose (never the share links' or the unsubscribe links'):
// - the render token, a hidden field of the hosted page: the form and when the page was shown, so that a
//   submit can be told apart from one made too fast after it (a bot's) without storing anything;
// - the confirmation token, the end of the link a double opt-in email carries: the team, the signup and
//   when the link expires. A token whose tag verifies but whose time has passed is expired, not forged,
//   so the page can say which.
import { randomBytes } from 'node:crypto';
import { createSignedTokenCodec, uuidFromBytes, uuidToBytes } from '@postline/platform/pure';

export type RenderToken = { formId: string; renderedAt: Date };
export type ConfirmationToken = { teamId: string; signupId: string; expiresAt: Date };

export type FormTokens = {
  render(token: RenderToken): string;
  /** What a render token names, if it is exactly what render() wrote. */
  rendered(token: string): RenderToken | undefined;
  confirmation(token: ConfirmationToken): string;
  /** What a confirmation token names (expired or not), if it is exactly what confirmation() wrote. */
  confirmed(token: string): ConfirmationToken | undefined;
};

const RENDER_BYTES = 16 + 6; // form id, time shown in ms (48 bits)
const CONFIRM_BYTES = 16 + 16 + 6; // team id, signup id, expiry in ms (48 bits)

/**
 * @example
 * const tokens = createFormTokens(config.POSTLINE_SECRET_KEY);
 * tokens.rendered(tokens.render({ formId, renderedAt: new Date() })); // { formId, renderedAt }
 */
export function createFormTokens(secretKey: string): FormTokens {
  const render = createSignedTokenCodec(secretKey, 'postline-form-render', RENDER_BYTES);
  const confirm = createSignedTokenCodec(secretKey, 'postline-form-confirm', CONFIRM_BYTES);
  return {
    render(token) {
      const payload = Buffer.alloc(RENDER_BYTES);
      uuidToBytes(token.formId).copy(payload, 0);
      payload.writeUIntBE(token.renderedAt.getTime(), 16, 6);
      return render.encode(payload);
    },
    rendered(token) {
      const payload = render.decode(token);
      if (!payload) return undefined;
      return { formId: uuidFromBytes(payload.subarray(0, 16)), renderedAt: new Date(payload.readUIntBE(16, 6)) };
    },
    confirmation(token) {
      const payload = Buffer.alloc(CONFIRM_BYTES);
      uuidToBytes(token.teamId).copy(payload, 0);
      uuidToBytes(token.signupId).copy(payload, 16);
      payload.writeUIntBE(token.expiresAt.getTime(), 32, 6);
      return confirm.encode(payload);
    },
    confirmed(token) {
      const payload = confirm.decode(token);
      if (!payload) return undefined;
      return {
        teamId: uuidFromBytes(payload.subarray(0, 16)),
        signupId: uuidFromBytes(payload.subarray(16, 32)),
        expiresAt: new Date(payload.readUIntBE(32, 6)),
      };
    },
  };
}

/**
 * A new form's public id: the team's id (the gateway reads it to know the team of a submit before it
 * forwards it) and 16 random bytes (what makes it unguessable), base64url: 43 characters.
 */
export function newPublicId(teamId: string): string {
  return Buffer.concat([uuidToBytes(teamId), randomBytes(16)]).toString('base64url');
}

/** The hosted page's URL, on the public API's address. */
export function hostedFormUrl(publicBaseUrl: string, publicId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/f/${publicId}`;
}

/** A confirmation link's URL. */
export function confirmationUrl(publicBaseUrl: string, publicId: string, token: string): string {
  return `${hostedFormUrl(publicBaseUrl, publicId)}/confirm/${token}`;
}
