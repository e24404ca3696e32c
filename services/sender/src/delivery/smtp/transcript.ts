// What the MTA keeps of each SMTP conversation: which MX host and address it dialled, the TLS it got, and
// the commands it sent with the replies it received, never the message body. Bounded, so that a chatty or
// hostile server cannot make an attempt's record large.
import type tls from 'node:tls';
import type SMTPConnection from 'nodemailer/lib/smtp-connection';

/** One MX address tried for one delivery (or the lookup that found none to try), as the email's page shows it. */
export type SmtpTrace = {
  /** The MX host name; null when the lookup gave no host to try. */
  mx: string | null;
  /** The address dialled. */
  ip: string | null;
  port: number | null;
  /** The TLS of the session the transaction ran on; null in plaintext. */
  tls: SessionTls | null;
  startedAt: Date;
  durationMs: number;
  /** The recipients (addresses, as in RCPT TO) this try was for. */
  recipients: string[];
  /** `C: ` our commands, `S: ` the server's replies, `* ` what happened besides (connects, lookups, timeouts). */
  lines: string[];
  /** Lines left out once the bounds were reached. */
  omitted: number;
};

export type SessionTls = { version: string; cipher: string };

/** At most this many lines and characters a trace, each line at most LINE_CHARS (a reply's text can be long). */
export const TRANSCRIPT_LIMITS = { lines: 120, chars: 16_384, lineChars: 512 } as const;

export type Transcript = {
  add: (line: string) => void;
  /** The lines so far and how many were left out. */
  read: () => { lines: string[]; omitted: number };
};

export function createTranscript(
  limits: { lines: number; chars: number; lineChars: number } = TRANSCRIPT_LIMITS,
): Transcript {
  const lines: string[] = [];
  let chars = 0;
  let omitted = 0;
  return {
    add(line) {
      const cut = line.length > limits.lineChars ? `${line.slice(0, limits.lineChars - 1)}…` : line;
      if (lines.length >= limits.lines || chars + cut.length > limits.chars) {
        omitted++;
        return;
      }
      lines.push(cut);
      chars += cut.length;
    },
    read: () => ({ lines: [...lines], omitted }),
  };
}

/** A transcript that keeps nothing: for deliveries whose caller asked for no trace. */
export const NO_TRANSCRIPT: Transcript = { add: () => undefined, read: () => ({ lines: [], omitted: 0 }) };

/**
 * Where an SMTP session's lines go: the transcript of the transaction it serves now, or nowhere while it
 * waits idle in the pool (its QUIT, for one, belongs to no delivery).
 */
export type TranscriptSink = { current: Transcript | undefined };

/**
 * A logger for nodemailer's SMTPConnection that writes the session's traffic (its `transactionLog`: commands
 * and replies, without the message) into the sink's transcript. Multi-line replies become one line each.
 */
export function transcriptLogger(sink: TranscriptSink): SMTPConnection.Options['logger'] {
  const ignore = () => undefined;
  const debug = (entry: { tnx?: string }, message: unknown) => {
    const transcript = sink.current;
    if (!transcript || typeof message !== 'string') return;
    const prefix = entry.tnx === 'client' ? 'C: ' : entry.tnx === 'server' ? 'S: ' : undefined;
    if (!prefix) return;
    for (const line of message.split(/\r?\n/)) transcript.add(`${prefix}${line}`);
  };
  return { level: ignore, trace: ignore, debug, info: ignore, warn: ignore, error: ignore, fatal: ignore };
}

/** The protocol and cipher of a session's socket once STARTTLS succeeded; null in plaintext. */
export function sessionTls(conn: SMTPConnection): SessionTls | null {
  if (!conn.secure) return null;
  // nodemailer swaps its socket for the TLS one on upgrade; its typings do not name the field.
  const socket = (conn as unknown as { _socket?: tls.TLSSocket })._socket;
  const version = socket?.getProtocol?.();
  const cipher = socket?.getCipher?.()?.name;
  return version && cipher ? { version, cipher } : null;
}
