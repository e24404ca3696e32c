// Reading the server's replies off the socket, and what makes a reply line malformed.
import { preview, type SmtpReply } from './session.ts';

/** RFC 5321's limit on a reply line, its CRLF included. */
const MAX_REPLY_LINE_OCTETS = 512;

/**
 * Over-long reply lines smtp-server itself writes (it echoes a parameter name whatever its length): an
 * upstream matter, left out so that the run goes on to find ours.
 */
const UPSTREAM_LONG_LINES = [/^501 (?:5\.5\.4 )?Error: duplicate /];

/** Why one reply line (without its CRLF) is not a well-formed SMTP reply line, or undefined. */
export function replyLineProblem(line: Buffer): string | undefined {
  const text = line.toString('utf8');
  if (line.length + 2 > MAX_REPLY_LINE_OCTETS && !UPSTREAM_LONG_LINES.some((known) => known.test(text)))
    return `reply line of ${line.length + 2} octets: ${preview(text)}`;
  if (!/^[2-5][0-9][0-9](?:[ -]|$)/.test(text)) return `malformed reply line: ${preview(text)}`;
  if (line.some((byte) => (byte < 0x20 && byte !== 0x09) || byte === 0x7f))
    return `control character in a reply line: ${preview(text)}`;
  return undefined;
}

/** Reads replies off a byte stream: `push` bytes, `take` whole replies; `problems` has every malformed line. */
export function createReplyReader(): {
  push: (chunk: Buffer) => void;
  take: () => SmtpReply | undefined;
  pending: () => number;
  /** Bytes received that end no line (a reply cut off without its CRLF). */
  rest: () => Buffer;
  problems: string[];
} {
  let buffer: Buffer = Buffer.alloc(0);
  const ready: SmtpReply[] = [];
  const problems: string[] = [];
  let open: SmtpReply | undefined;
  return {
    push(chunk) {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.subarray(0, end);
        buffer = buffer.subarray(end + 2);
        const problem = replyLineProblem(line);
        if (problem) problems.push(problem);
        const text = line.toString('utf8');
        const code = problem && !/^\d{3}/.test(text) ? 0 : Number(text.slice(0, 3));
        if (open && open.code !== code) problems.push(`reply line ${preview(text)} continues a ${open.code} reply`);
        open ??= { code, lines: [] };
        open.lines.push(text.slice(4));
        if (text[3] !== '-' || code === 0) {
          ready.push(open);
          open = undefined;
        }
      }
    },
    take: () => ready.shift(),
    pending: () => ready.length,
    rest: () => buffer,
    problems,
  };
}
