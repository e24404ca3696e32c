// Types for the parts of mailauth 7 that its signer is made of (they ship without declarations); the
// sender signs with them directly so that it can reuse an opened key (mime/dkim.ts).
declare module 'mailauth/lib/tools.js' {
  export type ParsedHeader = { key: string; casedKey: string; line: Buffer };
  export type SigningHeaderLines = { keys: string; headers: ParsedHeader[] };
  export function parseHeaders(buf: Buffer): { parsed: ParsedHeader[]; original: Buffer };
  export function getSigningHeaderLines(
    parsed: ParsedHeader[],
    fieldNames: string,
    verify?: boolean,
  ): SigningHeaderLines;
  export function formatSignatureHeaderLine(type: 'DKIM', values: Record<string, unknown>, folded: boolean): string;
}

declare module 'mailauth/lib/dkim/body/index.js' {
  export function dkimBody(
    canonicalization: 'relaxed' | 'simple',
    algorithm: 'sha256',
    maxBodyLength: number | false,
  ): { update(chunk: Buffer): void; digest(encoding: 'base64'): string };
}

declare module 'mailauth/lib/dkim/header/index.js' {
  import type { SigningHeaderLines } from 'mailauth/lib/tools.js';
  export function generateCanonicalizedHeader(
    type: 'DKIM',
    signingHeaderLines: SigningHeaderLines,
    options: {
      signingDomain: string;
      selector: string;
      algorithm: string;
      canonicalization: string;
      bodyHash: string;
      timestamp: number | false;
      expiration: number | false;
    },
  ): { canonicalizedHeader: Buffer; dkimHeaderOpts: Record<string, unknown> };
}
