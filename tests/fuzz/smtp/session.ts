// What an SMTP fuzz session is (its pieces, target, replies and result), and how its pieces become bytes
// to send and its text becomes a transcript line.

/** Bytes to send: text (UTF-8, with `{{var}}` placeholders filled in at run time) or raw bytes. */
export type Piece = string | { bytes: number[] };

/** Which listener a session talks to: the MX, the relay with STARTTLS, the relay with implicit TLS. */
export type Listener = 'mx' | 'relay' | 'relay-tls';

/** A session: each step is written in one write, then its replies are awaited; it ends with QUIT or a close. */
export type SmtpSession = { listener: Listener; steps: Piece[][]; end: 'quit' | 'close' };

export type SmtpReply = { code: number; lines: string[] };

/** What a fuzzed session runs against. */
export type SmtpTarget = {
  host: string;
  ports: Record<Listener, number>;
  /** Placeholder values: `in` (receiving domain), `out` (sending domain), `rcpt` (sink domain), AUTH blobs. */
  vars: Record<string, string>;
  /** The lower-case domains the MX takes mail for: a receiving domain, a return-path domain. */
  receivingDomain: string;
  returnPathDomain: string;
  alive: () => boolean;
  /** Checks the stores against a session's messages answered 250 (see createStoreChecks). */
  verifyStored: (session: StoredSession) => Promise<string[]>;
  /** What a failure report adds (the service's last log lines). */
  diagnostics?: () => string;
};

/** A message answered 250, with how many of its recipients were at the receiving and return-path domains. */
export type AcceptedMessage = { reply: SmtpReply; receiving: number; returnPath: number };

/** What the store checks get of a session: its tag, its source address and its messages answered 250. */
export type StoredSession = { listener: Listener; tag: string; address: string; accepted: AcceptedMessage[] };

export type SessionResult = {
  tag: string;
  transcript: string[];
  problems: string[];
  accepted: AcceptedMessage[];
  codes: number[];
  authenticated: boolean;
};

export function render(pieces: Piece[], vars: Record<string, string>): Buffer {
  return Buffer.concat(
    pieces.map((piece) =>
      typeof piece === 'string'
        ? Buffer.from(
            // `{{NAME}}` is the value of `{{name}}` upper-cased.
            piece.replace(/\{\{([a-zA-Z-]+)\}\}/g, (all, name: string) => {
              const value = vars[name.toLowerCase()];
              if (value === undefined) return all;
              return name === name.toUpperCase() ? value.toUpperCase() : value;
            }),
          )
        : Buffer.from(piece.bytes),
    ),
  );
}

export function preview(text: string, max = 160): string {
  const shown = JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
  return text.length > max ? `${shown} (${text.length} chars)` : shown;
}
