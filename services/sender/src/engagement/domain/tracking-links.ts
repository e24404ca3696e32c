// Open and click tracking links. The open pixel (`/o/{token}`) and each rewritten link (`/c/{token}`) are
// served key-less on the domain's tracking host (`<tracking_subdomain>.<domain>`, a CNAME to TRACKING_HOST,
// which reaches the gateway). A token is sealed with AES-256-GCM under a key derived from
// POSTLINE_SECRET_KEY: it names the email and, for a click, the original URL, which only we can read (no
// open redirect, nothing to look up before answering), and any edit makes it name nothing. The tracking
// host is bound to the token as authenticated data: a token opens only on the host it was made for, so one
// team's link cannot be served from another team's branded host.
import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes } from 'node:crypto';
import { uuidFromBytes, uuidToBytes } from '@postline/platform/pure';

export type TrackingKind = 'open' | 'click';

export type TrackingLink = { kind: TrackingKind; emailId: string; url: string | null };

export type TrackingCipher = {
  /** Seals `link` for the tracking host `host` (`links.example.com`). */
  seal(link: TrackingLink, host: string): string;
  /** What a token names, if it is one we sealed, of `kind`, for `host`. */
  open(token: string, kind: TrackingKind, host: string): TrackingLink | undefined;
};

/** The paths of the two kinds on the tracking host. */
export const TRACKING_PATHS: Record<TrackingKind, string> = { open: '/o', click: '/c' };

/** A token: base64url, 1 (kind) + 16 (email) + url bytes, with a 12-byte nonce and a 16-byte tag. */
export const TRACKING_TOKEN = /^[A-Za-z0-9_-]{60,4096}$/;

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KINDS: TrackingKind[] = ['open', 'click'];

export function createTrackingCipher(secretKey: string): TrackingCipher {
  // A key object: each cipher made from it skips importing raw key bytes (a quarter of the cost of a seal).
  const key = createSecretKey(createHash('sha256').update(`postline-tracking-links:${secretKey}`).digest());
  return {
    seal(link, host) {
      const payload = Buffer.concat([
        Buffer.of(KINDS.indexOf(link.kind)),
        uuidToBytes(link.emailId),
        Buffer.from(link.url ?? '', 'utf8'),
      ]);
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(hostData(host));
      const sealed = Buffer.concat([cipher.update(payload), cipher.final()]);
      return Buffer.concat([nonce, sealed, cipher.getAuthTag()]).toString('base64url');
    },
    open(token, kind, host) {
      if (!TRACKING_TOKEN.test(token)) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      if (bytes.length < NONCE_BYTES + 17 + TAG_BYTES || bytes.toString('base64url') !== token) return undefined;
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      decipher.setAAD(hostData(host));
      let payload: Buffer;
      try {
        payload = Buffer.concat([
          decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)),
          decipher.final(),
        ]);
      } catch {
        return undefined; // the tag does not verify: edited, or not ours
      }
      if (KINDS[payload.readUInt8(0)] !== kind) return undefined;
      const url = payload.subarray(17).toString('utf8');
      return { kind, emailId: uuidFromBytes(payload.subarray(1, 17)), url: kind === 'click' ? url : null };
    },
  };
}

/** A host name as bound to a token: lowercase, without a port or a trailing dot. */
function hostData(host: string): Buffer {
  return Buffer.from(host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, ''), 'utf8');
}

/** The public URL of a token on a tracking host (`links.example.com`). */
export function trackingUrl(trackingHost: string, kind: TrackingKind, token: string): string {
  return `https://${trackingHost}${TRACKING_PATHS[kind]}/${token}`;
}
