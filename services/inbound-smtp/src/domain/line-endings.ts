// SMTP smuggling (CERT VU#302671, CVE-2023-51764): two mail systems that disagree on where a message ends let an
// attacker slip a second, spoofed message through. smtp-server ends DATA only at <CRLF>.<CRLF>, but passes a bare CR or
// LF through; whatever we store, relay or sign must not keep one that a later hop could read as a line end. Every CR or
// LF that is not part of a CRLF becomes CRLF, as Postfix's `smtpd_forbid_bare_newline = normalize` does.

const CR = 0x0d;
const LF = 0x0a;

/** `raw` with every bare CR and bare LF turned into CRLF; the same Buffer when it has none (the usual case). */
export function normalizeLineEndings(raw: Buffer): Buffer {
  let bare = 0;
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i];
    if (byte === CR) {
      if (raw[i + 1] === LF) i++;
      else bare++;
    } else if (byte === LF) bare++;
  }
  if (bare === 0) return raw;
  const out = Buffer.allocUnsafe(raw.length + bare);
  let o = 0;
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i]!;
    if (byte === CR || byte === LF) {
      out[o++] = CR;
      out[o++] = LF;
      if (byte === CR && raw[i + 1] === LF) i++;
    } else out[o++] = byte;
  }
  return out;
}
