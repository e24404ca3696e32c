// SMTP fuzzing of the inbound-smtp's MX and relay over real sockets: random sessions (odd EHLO/HELO, MAIL and
// RCPT with malformed, huge, unicode, quoted or bracket-less addresses and parameters, NUL bytes, lines past
// 512 bytes and past 64 KB, pipelined bursts, bare LF and bare CR line ends, unknown verbs, AUTH with garbage
// base64, STARTTLS at odd times and with commands injected after it, RSET/NOOP/VRFY, and DATA bodies carrying
// smuggling attempts such as `\n.\n`, `\r\n.\n`, `\n.\r\n`, `\r.\r` followed by a second MAIL/RCPT/DATA).
//
// The client keeps a model of what the server must do with the bytes it was sent (command lines split on
// `\r?\n`, DATA up to the first `<CRLF>.<CRLF>`), so each reply is paired with the command or message it
// answers and a reply the model does not expect (a smuggled command answered) is a failure. Properties:
// - every reply line is `NNN[ -]text` with NNN 200-599, at most 512 octets with its CRLF, no control
//   character, and the lines of one reply share their code; each reply fits what it answers (354 only to
//   DATA, 334 and 235 only to AUTH, 221 only to QUIT, 220 only to STARTTLS, 2xx never to an unknown verb);
// - the process never exits;
// - nothing pipelined after STARTTLS is answered (no command injection into the TLS session);
// - MX: RCPT is taken only at the receiving domain and the return-path domain (bounces, complaints and
//   unsubscribe requests, with valid and forged VERP addresses), DATA is never 354/250 with every recipient
//   refused, a message read in full is never answered 4xx (the database is up), the received emails from the
//   session's address are as many as its DATA 250s for the receiving domain (no second message out of one
//   DATA), stored with CRLF line ends only, and return-path mail is recorded only for messages answered 250;
// - relay: no AUTH accepted before TLS (538), no 250 to MAIL or RCPT and no 354 before AUTH succeeded, and
//   the emails the sender stored for the session are exactly the ones its DATA 250s name, each stored with
//   CRLF line ends only (bare CR/LF normalised before it is relayed).
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import fc from 'fast-check';
import { verpAddress, verpKeyOf } from '@postline/platform';

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

/** Waits, in milliseconds: for one reply (the MX parses and checks DNS before its DATA 250), a connection. */
const REPLY_TIMEOUT_MS = 15_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** The server closes within this after its 221 or 421 (smtp-server's half-close deadline is 5 s). */
const CLOSE_TIMEOUT_MS = 10_000;
/** A whole session never runs longer than this (checked between steps). */
const SESSION_DEADLINE_MS = 90_000;
const MAX_REPLY_LINE_OCTETS = 512;

// ---------------------------------------------------------------------------------------------- replies

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

// -------------------------------------------------------------------------------------------- the model

export type Unit = { kind: 'command'; line: Buffer } | { kind: 'data'; bytes: Buffer };

const DATA_END = Buffer.from('\r\n.\r\n');

/**
 * What the server makes of the bytes sent: in command mode a line ends at LF (an optional CR before it is
 * dropped; a bare CR ends nothing), in data mode the message ends at the first CRLF.CRLF (or at once when it
 * starts with `.` CRLF). The mode turns to data when a 354 answers, so units are taken one reply at a time.
 */
export function createInputModel(): {
  append: (bytes: Buffer) => void;
  next: () => Unit | undefined;
  enterData: () => void;
  /** Forgets what is pending (plaintext the server drops at STARTTLS). */
  discard: () => void;
  mode: () => 'command' | 'data';
  pendingBytes: () => number;
} {
  let buffer: Buffer = Buffer.alloc(0);
  let mode: 'command' | 'data' = 'command';
  return {
    append(bytes) {
      buffer = Buffer.concat([buffer, bytes]);
    },
    next() {
      if (mode === 'command') {
        const lf = buffer.indexOf(0x0a);
        if (lf < 0) return undefined;
        const line = buffer.subarray(0, lf > 0 && buffer[lf - 1] === 0x0d ? lf - 1 : lf);
        buffer = buffer.subarray(lf + 1);
        return { kind: 'command', line };
      }
      const end = buffer.subarray(0, 3).equals(Buffer.from('.\r\n')) ? 3 : buffer.indexOf(DATA_END);
      if (end < 0) return undefined;
      const length = end === 3 && buffer[0] === 0x2e ? 3 : end + DATA_END.length;
      const bytes = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
      mode = 'command';
      return { kind: 'data', bytes };
    },
    enterData() {
      mode = 'data';
    },
    discard() {
      buffer = Buffer.alloc(0);
    },
    mode: () => mode,
    pendingBytes: () => buffer.length,
  };
}

// ------------------------------------------------------------------------------------------ the checks

/** What the client knows of the session, as the replies so far have told it. */
export type SessionState = {
  listener: Listener;
  receivingDomain: string;
  returnPathDomain: string;
  secure: boolean;
  authenticated: boolean;
  /** The last reply was 334: the next line is an AUTH continuation, not a command. */
  authContinues: boolean;
  mailAccepted: boolean;
  recipientsAccepted: number;
  /** The MX's recipients accepted at each of its domains (a RCPT the MX took elsewhere is a failure). */
  receivingAccepted: number;
  returnPathAccepted: number;
  accepted: AcceptedMessage[];
};

export function initialState(listener: Listener, domains: { receiving: string; returnPath: string }): SessionState {
  return {
    listener,
    receivingDomain: domains.receiving,
    returnPathDomain: domains.returnPath,
    secure: listener === 'relay-tls',
    authenticated: false,
    authContinues: false,
    mailAccepted: false,
    recipientsAccepted: 0,
    receivingAccepted: 0,
    returnPathAccepted: 0,
    accepted: [],
  };
}

/** The verbs smtp-server has a handler for; any other gets 500 (or 421 when it ends the session). */
const KNOWN_VERBS = new Set([
  ...['EHLO', 'HELO', 'QUIT', 'NOOP', 'RSET', 'HELP', 'VRFY', 'XCLIENT', 'XFORWARD'],
  ...['STARTTLS', 'AUTH', 'MAIL', 'RCPT', 'DATA', 'WIZ', 'SHELL', 'KILL'],
]);

/** The verb smtp-server reads from a line: up to the first space, upper-cased. */
export function verbOf(line: Buffer): string {
  return (line.toString('binary').split(' ')[0] ?? '').toUpperCase();
}

function resetTransaction(state: SessionState): void {
  state.mailAccepted = false;
  state.recipientsAccepted = 0;
  state.receivingAccepted = 0;
  state.returnPathAccepted = 0;
}

/**
 * Checks one reply against what it answers and updates the state; returns the problems it shows. A 421 is
 * acceptable anywhere (the server ends the session), and the caller stops there.
 */
export function checkReply(state: SessionState, unit: Unit, reply: SmtpReply): string[] {
  const problems: string[] = [];
  const { code } = reply;
  const relay = state.listener !== 'mx';
  const continuation = unit.kind === 'command' && state.authContinues;
  state.authContinues = false;
  if (code === 421) return problems;
  if (unit.kind === 'data') {
    if (code < 200 || (code >= 300 && code < 400)) problems.push(`${code} at the end of DATA`);
    if (code === 250) {
      if (!relay && state.recipientsAccepted === 0) problems.push('250 to a message whose recipients were all refused');
      if (relay && !state.authenticated) problems.push('250 to a message without AUTH');
      state.accepted.push({ reply, receiving: state.receivingAccepted, returnPath: state.returnPathAccepted });
    }
    if (code >= 400 && code < 500)
      problems.push(`${code} to a message read in full (${reply.lines.join(' ')}): the sender retries it forever`);
    resetTransaction(state);
    return problems;
  }
  if (continuation) {
    // smtp-server checks "AUTH required" (530) and "EHLO first" (503) before it hands a line to the AUTH
    // exchange, so a continuation starting with MAIL, RCPT or DATA gets those (RFC 4954 asks 501): still a refusal.
    if (![235, 334, 454, 501, 503, 504, 530, 535].includes(code)) problems.push(`${code} to an AUTH continuation`);
    if (code === 235) state.authenticated = true;
    state.authContinues = code === 334;
    return problems;
  }
  const verb = verbOf(unit.line);
  const expect = (allowed: boolean, what: string) => {
    if (!allowed) problems.push(`${code} to ${verb}: ${what}`);
  };
  if (code === 354) expect(verb === 'DATA', '354 only answers DATA');
  if (code === 334 || code === 235) expect(verb === 'AUTH', `${code} only answers AUTH`);
  if (code === 220) expect(verb === 'STARTTLS', '220 only answers STARTTLS');
  if (code === 221) expect(verb === 'QUIT', '221 only answers QUIT');
  if (!KNOWN_VERBS.has(verb)) expect(code >= 500, 'an unknown verb is refused');
  switch (verb) {
    case 'EHLO':
    case 'HELO':
    case 'RSET':
      if (code === 250) resetTransaction(state);
      break;
    case 'QUIT':
      expect(code === 221, 'QUIT is answered 221');
      break;
    case 'XCLIENT':
    case 'XFORWARD':
      expect(code >= 500, 'no client may rewrite its own address');
      break;
    case 'STARTTLS':
      if (code === 220) {
        expect(!state.secure, 'TLS is already on');
        state.secure = true;
        state.authenticated = false;
        resetTransaction(state);
      }
      break;
    case 'AUTH':
      if (!relay) expect(code >= 500, 'the MX has no AUTH');
      else if (!state.secure) expect([538, 530, 503].includes(code), 'AUTH before TLS is refused with 538');
      if (code === 235) state.authenticated = true;
      state.authContinues = code === 334;
      break;
    case 'MAIL':
      if (code === 250) {
        if (relay) expect(state.authenticated, 'MAIL is refused before AUTH (530)');
        state.mailAccepted = true;
      }
      break;
    case 'RCPT':
      if (code === 250) {
        if (relay) expect(state.authenticated, 'RCPT is refused before AUTH (530)');
        expect(state.mailAccepted, 'RCPT needs MAIL first');
        state.recipientsAccepted++;
        if (!relay) {
          const text = unit.line.toString('utf8').toLowerCase();
          if (text.includes(`@${state.receivingDomain}`)) state.receivingAccepted++;
          else if (text.includes(`@${state.returnPathDomain}`)) state.returnPathAccepted++;
          else problems.push(`${code} to RCPT: the MX takes recipients at its domains only`);
        }
      }
      break;
    case 'DATA':
      if (code === 354) {
        if (relay) expect(state.authenticated, 'DATA is refused before AUTH (530)');
        else expect(state.recipientsAccepted > 0, 'DATA is refused when every recipient was');
      }
      break;
    default:
      break;
  }
  return problems;
}

// ------------------------------------------------------------------------------------------ connection

type Connection = {
  write: (bytes: Buffer) => void;
  /** The next reply, or why there is none. */
  reply: (timeoutMs: number) => Promise<SmtpReply | 'closed' | 'timeout'>;
  upgrade: () => Promise<string | undefined>;
  isClosed: () => boolean;
  waitClosed: (timeoutMs: number) => Promise<boolean>;
  reader: ReturnType<typeof createReplyReader>;
  destroy: () => void;
};

async function openConnection(host: string, port: number, localAddress: string, tls: boolean): Promise<Connection> {
  const reader = createReplyReader();
  let closed = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onData = (chunk: Buffer) => {
    reader.push(chunk);
    notify();
  };
  const onClose = () => {
    closed = true;
    notify();
  };
  const options = { host, port, localAddress };
  let socket: Socket | TLSSocket = tls ? tlsConnect({ ...options, rejectUnauthorized: false }) : netConnect(options);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no connection to port ${port} in ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', (err: Error) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  socket.on('error', () => undefined);
  socket.on('data', onData);
  socket.on('close', onClose);

  const wait = (timeoutMs: number, done: () => boolean) =>
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (done()) {
          clearTimeout(timer);
          return resolve(true);
        }
        wake = check;
      };
      const timer = setTimeout(() => {
        wake = undefined;
        resolve(false);
      }, timeoutMs);
      check();
    });

  return {
    write: (bytes) => {
      if (!closed && !socket.destroyed) socket.write(bytes);
    },
    async reply(timeoutMs) {
      const arrived = await wait(timeoutMs, () => reader.pending() > 0 || closed);
      const reply = reader.take();
      if (reply) return reply;
      return arrived ? 'closed' : 'timeout';
    },
    async upgrade() {
      if (reader.rest().length > 0) return `bytes after the 220 to STARTTLS: ${preview(reader.rest().toString())}`;
      const raw = socket;
      raw.off('data', onData);
      raw.off('close', onClose);
      const secure = tlsConnect({ socket: raw, rejectUnauthorized: false });
      socket = secure;
      secure.on('error', () => undefined);
      const outcome = await new Promise<string | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(`no TLS handshake in ${CONNECT_TIMEOUT_MS} ms`), CONNECT_TIMEOUT_MS);
        secure.once('secureConnect', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
        secure.once('error', (err: Error) => {
          clearTimeout(timer);
          resolve(`TLS handshake after 220 failed: ${err.message}`);
        });
      });
      secure.on('data', onData);
      secure.on('close', onClose);
      if (secure.destroyed) onClose();
      return outcome;
    },
    isClosed: () => closed,
    waitClosed: (timeoutMs) => wait(timeoutMs, () => closed),
    reader,
    destroy: () => socket.destroy(),
  };
}

// ---------------------------------------------------------------------------------------------- runner

let sessionCount = 0;

/**
 * A loopback source address of its own for each session (Linux routes all of 127/8 to the loopback): AUTH
 * failures lock out one address, not the run, and what the MX stored is counted per session by its address.
 */
function sourceAddress(n: number): string {
  return `127.${1 + (Math.floor(n / 254 / 254) % 254)}.${1 + (Math.floor(n / 254) % 254)}.${1 + (n % 254)}`;
}

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

function describeUnit(unit: Unit): string {
  return unit.kind === 'command' ? `C: ${preview(unit.line.toString('utf8'))}` : `C: <DATA ${unit.bytes.length} bytes>`;
}

export function preview(text: string, max = 160): string {
  const shown = JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
  return text.length > max ? `${shown} (${text.length} chars)` : shown;
}

/** Runs one session against the target; the problems it shows, with its transcript. */
export async function runSession(target: SmtpTarget, session: SmtpSession): Promise<SessionResult> {
  const n = sessionCount++;
  const tag = `fz${n}q`;
  const vars = { ...target.vars, tag };
  const state = initialState(session.listener, {
    receiving: target.receivingDomain,
    returnPath: target.returnPathDomain,
  });
  const address = sourceAddress(n);
  const transcript: string[] = [];
  const problems: string[] = [];
  const codes: number[] = [];
  const deadline = Date.now() + SESSION_DEADLINE_MS;
  const result = (): SessionResult => ({
    tag,
    transcript,
    problems,
    accepted: state.accepted,
    codes,
    authenticated: state.authenticated,
  });
  const connection = await openConnection(
    target.host,
    target.ports[session.listener],
    address,
    session.listener === 'relay-tls',
  ).catch((err: unknown) => {
    problems.push(`could not connect from ${address}: ${String(err)}`);
    return undefined;
  });
  if (!connection) return result();
  const input = createInputModel();
  /** The session is over: the server said 221 or 421 (`closing`), or it stopped answering. */
  let ending = false;
  let closing = false;
  try {
    const greeting = await connection.reply(REPLY_TIMEOUT_MS);
    if (typeof greeting === 'string' || greeting.code !== 220) {
      problems.push(`greeting: ${typeof greeting === 'string' ? greeting : greeting.code}`);
      return result();
    }
    transcript.push(`S: ${greeting.code} ${greeting.lines.join(' | ')}`);

    /** Reads the reply to every whole unit sent, in order. */
    const drain = async () => {
      for (let unit = input.next(); unit && !ending; unit = input.next()) {
        transcript.push(describeUnit(unit));
        const reply = await connection.reply(REPLY_TIMEOUT_MS);
        if (reply === 'timeout' || reply === 'closed') {
          problems.push(
            `${reply === 'timeout' ? 'no reply' : 'connection closed without a reply'} to ${describeUnit(unit)}`,
          );
          ending = true;
          return;
        }
        codes.push(reply.code);
        transcript.push(`S: ${reply.code} ${preview(reply.lines.join(' | '), 200)}`);
        problems.push(...checkReply(state, unit, reply));
        if (reply.code === 421 || reply.code === 221) ending = closing = true;
        else if (reply.code === 354 && unit.kind === 'command') input.enterData();
        else if (reply.code === 220 && unit.kind === 'command') {
          // The server drops plaintext pipelined after STARTTLS; a reply to it inside TLS is a failure.
          input.discard();
          const failed = await connection.upgrade();
          transcript.push('-- TLS');
          if (failed) {
            problems.push(failed);
            ending = true;
          }
        }
      }
    };

    for (const step of session.steps) {
      if (ending || connection.isClosed()) break;
      if (Date.now() > deadline) {
        problems.push(`session longer than ${SESSION_DEADLINE_MS} ms`);
        break;
      }
      const bytes = render(step, vars);
      input.append(bytes);
      connection.write(bytes);
      await drain();
    }
    if (session.end === 'quit') {
      // Finish what is open (a message, a line) so that QUIT is read as a command; a QUIT read as an AUTH
      // continuation is sent again.
      for (let attempt = 0; attempt < 3 && !ending && !connection.isClosed(); attempt++) {
        const finish = input.mode() === 'data' ? '\r\n.\r\n' : input.pendingBytes() > 0 ? '\r\n' : '';
        const quit = Buffer.from(`${finish}QUIT\r\n`);
        input.append(quit);
        connection.write(quit);
        await drain();
      }
      if (!ending && !connection.isClosed()) problems.push('QUIT did not end the session');
    }
    if (closing && !(await connection.waitClosed(CLOSE_TIMEOUT_MS)))
      problems.push(`the server kept the connection ${CLOSE_TIMEOUT_MS} ms after its 221/421`);
  } finally {
    connection.destroy();
  }
  problems.push(...connection.reader.problems);
  for (let extra = connection.reader.take(); extra; extra = connection.reader.take()) {
    transcript.push(`S: ${extra.code} ${preview(extra.lines.join(' | '))}`);
    // A 421 the server sends on its own (a line too long before its end) is the last thing it says.
    if (extra.code !== 421) problems.push(`a reply nothing asked for: ${extra.code} ${preview(extra.lines.join(' '))}`);
  }
  if (connection.reader.rest().length > 0)
    problems.push(`a reply cut off without CRLF: ${preview(connection.reader.rest().toString())}`);
  if (!target.alive()) problems.push('the inbound-smtp process exited');
  problems.push(...(await target.verifyStored({ listener: session.listener, tag, address, accepted: state.accepted })));
  return result();
}

export type FuzzStats = {
  sessions: number;
  /** How often each reply code was seen. */
  codes: Map<number, number>;
  /** DATA answered 250. */
  accepted: number;
  authenticated: number;
};

export function newStats(): FuzzStats {
  return { sessions: 0, codes: new Map(), accepted: 0, authenticated: 0 };
}

export function record(stats: FuzzStats, result: SessionResult): void {
  stats.sessions++;
  stats.accepted += result.accepted.length;
  if (result.authenticated) stats.authenticated++;
  for (const code of result.codes) stats.codes.set(code, (stats.codes.get(code) ?? 0) + 1);
}

/** The error a failing session throws: its problems and its transcript (fast-check shrinks on it). */
export function failure(result: SessionResult, diagnostics?: string): Error {
  const transcript = result.transcript.length > 80 ? [...result.transcript.slice(0, 80), '…'] : result.transcript;
  return new Error(
    `session ${result.tag}:\n  ${result.problems.join('\n  ')}\ntranscript:\n  ${transcript.join('\n  ')}` +
      (diagnostics ? `\n${diagnostics}` : ''),
  );
}

/**
 * How long a lane shrinks a failure (each try is a real session, up to a reply timeout long): after it, every
 * try passes at once and fast-check reports the smallest failing session found so far.
 */
const SHRINK_BUDGET_MS = 60_000;

/**
 * Runs `runs` random sessions of `sessions` in `lanes` concurrent fast-check runs (seeds `seed`, `seed + 1`,
 * ...); each failure is shrunk to the smallest session that still shows it, for SHRINK_BUDGET_MS at most.
 */
export async function fuzzSmtp(opts: {
  target: SmtpTarget;
  sessions: fc.Arbitrary<SmtpSession>;
  runs: number;
  lanes: number;
  seed: number;
  stats: FuzzStats;
}): Promise<void> {
  const { target, lanes, stats } = opts;
  const outcomes = await Promise.allSettled(
    Array.from({ length: lanes }, (_, lane) => {
      let failedAt: number | undefined;
      return fc.assert(
        fc.asyncProperty(opts.sessions, async (session) => {
          if (failedAt !== undefined && Date.now() - failedAt > SHRINK_BUDGET_MS) return;
          const result = await runSession(target, session);
          record(stats, result);
          if (result.problems.length === 0) return;
          failedAt ??= Date.now();
          throw failure(result, target.diagnostics?.());
        }),
        {
          numRuns: Math.ceil(opts.runs / lanes),
          seed: opts.seed + lane,
          endOnFailure: false,
        },
      );
    }),
  );
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
}

// ------------------------------------------------------------------------------------------ generators

const CRLF = '\r\n';
const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const weighted = <T>(...entries: [number, fc.Arbitrary<T>][]) =>
  fc.oneof(...entries.map(([weight, arbitrary]) => ({ weight, arbitrary })));

/** Mostly CRLF; sometimes a bare LF (a line end for smtp-server), a bare CR (not one), or nothing. */
const lineEnd = weighted<string>(
  [24, fc.constant(CRLF)],
  [2, fc.constant('\n')],
  [1, pick('\r', '\r\r\n', '\n\r', '')],
);

const smallText = fc.string({ maxLength: 24 });
const unicodeText = fc.string({ unit: 'grapheme', maxLength: 16 });
const rawBytes = fc.uint8Array({ maxLength: 40 }).map((b) => ({ bytes: [...b] }));

const hostArgument = weighted<string>(
  [6, pick('client.test', 'mail.sender.test', '[127.0.0.1]', '[IPv6:::1]', 'localhost')],
  [2, pick('', ' ', 'a b', '-bad-', 'a..b', '_x.test', '[300.1.1.1]', 'münchen.example', 'x\u0000y', 'x'.repeat(300))],
  [1, smallText],
  [1, unicodeText],
);

const greeting = fc
  .tuple(weighted<string>([8, fc.constant('EHLO')], [3, pick('HELO', 'ehlo', 'Helo', 'LHLO', 'EHLO ')]), hostArgument)
  .map(([verb, host]) => `${verb} ${host}`);

/** Addresses for MAIL or RCPT; each one the MX could take carries the session's tag. */
function address(kind: 'mx-rcpt' | 'relay-rcpt' | 'mx-mail' | 'relay-mail'): fc.Arbitrary<string> {
  const domain =
    kind === 'mx-rcpt'
      ? '{{in}}'
      : kind === 'relay-rcpt'
        ? '{{rcpt}}'
        : kind === 'relay-mail'
          ? '{{out}}'
          : 'sender.test';
  const local = kind.endsWith('rcpt') ? fc.nat(5).map((n) => `{{tag}}-${n}`) : fc.constant('fuzz');
  const good = fc
    .tuple(local, fc.boolean())
    .map(([l, upper]) => (upper ? `${l}@${domain}`.toUpperCase() : `${l}@${domain}`));
  const odd = pick(
    '',
    '@',
    'postmaster',
    'a@',
    '@b',
    'a@b@c',
    'someone@elsewhere.test',
    'user@[127.0.0.1]',
    `"{{tag}}-q uoted"@${domain}`,
    `{{tag}}-ü@${domain}`,
    '用户@例子.广告',
    'x@münchen.de',
    `{{tag}}-a\u0000b@${domain}`,
    `{{tag}}-${'a'.repeat(65)}@${domain}`,
    `{{tag}}-${'a'.repeat(600)}@${domain}`,
    `${'a'.repeat(480)}@elsewhere.test`,
    `x@${'d'.repeat(60)}.${'e'.repeat(60)}.${'f'.repeat(60)}.${'g'.repeat(60)}.${'h'.repeat(60)}.${'i'.repeat(60)}.test`,
    `{{tag}}-${'ü'.repeat(200)}@${domain}`,
    `{{tag}}-x@${'d'.repeat(70)}.${domain}`,
    `{{tag}}-x@${domain}.`,
    `{{tag}}-x,y@${domain}`,
    `@route.test:{{tag}}-r@${domain}`,
    'x'.repeat(70_000),
  );
  return weighted<string>([8, good], [3, odd], [1, smallText], [1, unicodeText]);
}

const parameter = weighted<string>(
  [
    4,
    pick(
      'SIZE=0',
      'SIZE=100',
      'SIZE=99999999999',
      'SIZE=-1',
      'SIZE=abc',
      'SIZE=',
      'SIZE',
      'BODY=8BITMIME',
      'BODY=7BIT',
      'BODY=BINARYMIME',
      'BODY=x',
      'SMTPUTF8',
      'SMTPUTF8=yes',
      'RET=FULL',
      'RET=x',
      'ENVID=abc',
      'AUTH=<>',
      'REQUIRETLS',
      'NOTIFY=SUCCESS,FAILURE',
      'NOTIFY=NEVER,DELAY',
      'NOTIFY=x',
      'ORCPT=rfc822;a@b.test',
      'ORCPT=x',
      'FOO=BAR',
      '=x',
      `X${'p'.repeat(600)}=1`,
    ),
  ],
  [1, smallText],
);

function envelopeCommand(verb: 'MAIL' | 'RCPT', addresses: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const keyword = verb === 'MAIL' ? 'FROM' : 'TO';
  return fc
    .record({
      verb: weighted<string>([8, fc.constant(verb)], [1, fc.constant(verb.toLowerCase())]),
      keyword: weighted<string>(
        [8, fc.constant(`${keyword}:`)],
        [1, pick(`${keyword.toLowerCase()}:`, `${keyword}: `, keyword, `${keyword}:  `)],
      ),
      address: addresses,
      brackets: weighted<[string, string]>(
        [10, fc.constant(['<', '>'])],
        [1, pick<[string, string]>(['', ''], ['<', ''], ['', '>'], ['<<', '>>'], ['[', ']'])],
      ),
      params: weighted<string[]>([3, fc.constant([])], [1, fc.array(parameter, { minLength: 1, maxLength: 3 })]),
    })
    .map(({ verb: v, keyword: k, address: a, brackets: [open, close], params }) =>
      [`${v} ${k}${open}${a}${close}`, ...params].join(' '),
    );
}

const mailFrom = (relay: boolean) =>
  envelopeCommand('MAIL', weighted<string>([1, fc.constant('')], [4, address(relay ? 'relay-mail' : 'mx-mail')]));
const rcptTo = (relay: boolean) => envelopeCommand('RCPT', address(relay ? 'relay-rcpt' : 'mx-rcpt'));

const otherCommand = weighted<string>(
  [
    6,
    pick(
      'RSET',
      'NOOP',
      'NOOP hello',
      'VRFY postmaster',
      'VRFY <{{tag}}-1@{{in}}>',
      'VRFY',
      'EXPN staff',
      'HELP',
      'HELP MAIL',
      'RSET now',
      'DATA',
      'STARTTLS now',
      'AUTH PLAIN AHBvc3RsaW5lAHg=',
      'AUTH LOGIN',
      'BDAT 10 LAST',
      'XCLIENT ADDR=10.0.0.1 NAME=spoofed.test',
      'XFORWARD ADDR=10.0.0.1',
      'TURN',
      'ETRN example.com',
      'WIZ',
      'SHELL',
      'KILL',
      'MAIL',
      'RCPT',
      '',
      ' ',
      '\t',
      'NOOP\u0000',
      'NO\u0000OP',
    ),
  ],
  [1, pick('GET / HTTP/1.1', 'POST /emails HTTP/1.0', 'QUIT')],
  [2, fc.stringMatching(/^[A-Z]{1,10}( [a-z0-9]{0,8})?$/)],
  [1, smallText],
  [1, unicodeText],
);

/** A line past 512 bytes (smtp-server takes lines up to 16 KB) or past 64 KB (421 and the end). */
const longLine = fc
  .tuple(
    pick('NOOP ', 'EHLO ', 'MAIL FROM:<', 'RCPT TO:<', 'XYZZY ', 'AUTH PLAIN '),
    weighted<number>([3, fc.integer({ min: 513, max: 4000 })], [1, pick(16 * 1024 + 1, 70_000)]),
  )
  .map(([verb, length]) => `${verb}${'x'.repeat(length)}`);

/** Line ends smtp-server reads differently from `<CRLF>.<CRLF>`: a later hop might end the message there. */
export const SMUGGLING_ENDS = [
  '\n.\n',
  '\r\n.\n',
  '\n.\r\n',
  '\r.\r',
  '\r.\r\n',
  '\r\n.\r',
  '\n..\n',
  '\r\n\u0000.\r\n',
  '\r\n .\r\n',
];

/** The commands and message a smuggler hides after a false end of DATA (its recipient and subject tagged). */
export function smuggledMessage(relay: boolean, eol: string): string {
  return [
    `MAIL FROM:<${relay ? 'fuzz@{{out}}' : 'evil@evil.test'}>`,
    `RCPT TO:<{{tag}}-evil@${relay ? '{{rcpt}}' : '{{in}}'}>`,
    'DATA',
    relay ? 'From: Fuzz <fuzz@{{out}}>' : 'From: ceo@{{in}}',
    'To: victim@{{rcpt}}',
    'Subject: {{tag}} smuggled',
    '',
    'smuggled',
  ].join(eol);
}

/** A second message hidden in a body after a smuggling end. */
function smuggled(relay: boolean): fc.Arbitrary<string> {
  return fc
    .tuple(pick(...SMUGGLING_ENDS), pick(CRLF, '\n', '\r'))
    .map(([end, eol]) => `${end}${smuggledMessage(relay, eol)}${end}QUIT${eol}`);
}

const extraHeader = weighted<string>(
  [
    3,
    pick(
      'X-Nul\u0000Name: v',
      'X-Nul-Value: a\u0000b',
      'Subject: {{tag}} =?UTF-16BE?B?2AA=?=',
      'X-Encoded: =?UTF-8?B?AA==?=',
      'X-Surrogate: =?UTF-16LE?B?AN4=?=',
      `X-Long: ${'y'.repeat(2000)}`,
      'X-8bit: ünïcödé 中文',
      'Content-Type: multipart/mixed; boundary=b',
      'Content-Type: text/plain; charset=x-unknown',
      'Content-Type: text/plain; charset=utf-16be',
      'Content-Disposition: attachment; filename="=?UTF-8?B?AA==?=\u0000.txt"',
      'Content-Transfer-Encoding: base64',
      'X-Bare: a\nb',
      'X-Bare-Cr: a\rb',
      'X-Folded: a\r\n b',
      ': no name',
      'NoColon',
      'Bcc: hidden@elsewhere.test',
      'Date: not a date',
      'Message-ID: <\u0000@x>',
      'From: second@elsewhere.test',
    ),
  ],
  [1, fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), smallText).map(([k, v]) => `${k}: ${v}`)],
);

const bodyLine = weighted<Piece>(
  [
    4,
    pick(
      'hello',
      '',
      '.',
      '..',
      '.hidden',
      '...',
      ' .',
      'MAIL FROM:<x@y.test>',
      '\u0000\u0000',
      'ü',
      '--b',
      'Content-Type: text/plain',
    ),
  ],
  [1, fc.constant(`${'z'.repeat(70_000)}`)],
  [2, smallText],
  [1, unicodeText],
  [1, rawBytes],
);

/** How a message ends: `<CRLF>.<CRLF>` mostly; sometimes not at all, or with commands pipelined after it. */
const dataEnd = weighted<string>(
  [12, fc.constant('\r\n.\r\n')],
  [1, pick('', '\r\n.\r\nNOOP\r\n', '\r\n.\r\nRSET\r\nMAIL FROM:<a@b.test>\r\n', '\r\n.\r\n.\r\n')],
);

/** A DATA payload: a header block (tagged subject), a body, maybe a smuggled message, and an end. */
function messageBody(relay: boolean): fc.Arbitrary<Piece[]> {
  return fc
    .record({
      headers: fc.array(extraHeader, { maxLength: 3 }),
      lines: fc.array(bodyLine, { maxLength: 5 }),
      eol: lineEnd,
      smuggle: fc.option(smuggled(relay), { freq: 2 }),
      end: dataEnd,
    })
    .map(({ headers, lines, eol, smuggle, end }) => {
      const head = [
        relay ? 'From: Fuzz <fuzz@{{out}}>' : 'From: Someone <someone@sender.test>',
        relay ? 'To: {{tag}}-0@{{rcpt}}' : 'To: {{tag}}-0@{{in}}',
        'Subject: {{tag}} fuzzed',
        ...headers,
      ];
      const pieces: Piece[] = [head.join(CRLF), CRLF, CRLF];
      for (const line of lines) pieces.push(line, eol);
      if (smuggle !== null) pieces.push(smuggle);
      pieces.push(`end of ${'{{tag}}'}`, end);
      return pieces;
    });
}

/**
 * Mailboxes at the return-path domain: VERP addresses (with a recipient position, without, upper-cased,
 * with a forged tag), the report and unsubscribe mailboxes, and ones the MX refuses.
 */
const returnPathRecipient = weighted<string>(
  [
    4,
    pick(
      '{{verp}}',
      '{{verp-x}}',
      '{{VERP}}',
      'abuse@{{rp}}',
      'postmaster@{{rp}}',
      'unsubscribe@{{rp}}',
      'ABUSE@{{RP}}',
    ),
  ],
  [2, pick('{{verp-forged}}', 'nobody@{{rp}}', 'b.0.0.x@{{rp}}', '{{tag}}-0@{{rp}}')],
);

const reportValue = weighted<string>(
  [
    4,
    pick(
      ...['', 'abuse', 'fraud', 'not-spam', 'auth-failure', 'other', 'failed', 'delayed', 'delivered', 'relayed'],
      ...['5.1.1', '4.4.7', '5.7.1', '2.0.0', 'smtp; 550 5.1.1 No such user', 'smtp; 452 4.2.2 Mailbox full'],
      ...['rfc822; {{tag}}-0@elsewhere.test', 'rfc822;', 'dns; mx.elsewhere.test', '<{{verp}}>', '{{verp-x}}'],
      ...['<{{verp-forged}}>', '1', 'Mon, 1 Jan 2024 00:00:00 +0000', '192.0.2.1', 'elsewhere.test'],
    ),
  ],
  [
    2,
    pick(
      ...['abuse\u0000', 'a\u0000b', '=?UTF-16BE?B?2AA=?=', '=?UTF-8?B?AA==?=', `x${'x'.repeat(3000)}`, 'ünï 中'],
      ...['\u0000', 'rfc822; a\u0000b@elsewhere.test', 'smtp; 550 \u0000 no', 'failed\u0000', '5.1.1\u0000'],
      ...['smtp; 550 =?UTF-16BE?B?2AA=?=', 'rfc822; <{{verp}}> (\u0000)', 'abuse =?UTF-16LE?B?AN4=?='],
    ),
  ],
  [1, smallText],
  [1, unicodeText],
);

const REPORT_FIELDS = [
  ...['Reporting-MTA', 'Feedback-Type', 'User-Agent', 'Version', 'Original-Mail-From', 'Original-Rcpt-To'],
  ...['Arrival-Date', 'Source-IP', 'Reported-Domain', 'Final-Recipient', 'Original-Recipient', 'Action'],
  ...['Status', 'Diagnostic-Code', 'Remote-MTA', 'X-Odd'],
];
const reportFields = (max: number) => fc.array(fc.tuple(pick(...REPORT_FIELDS), reportValue), { maxLength: max });

/** A bounce (DSN, or a plain-text one), a complaint (ARF) or an unsubscribe request, with fuzzed fields. */
function returnPathBody(): fc.Arbitrary<Piece[]> {
  return fc
    .record({
      kind: pick('delivery-status', 'feedback-report', 'text'),
      subject: weighted<string>(
        [
          3,
          pick(
            ...['Undelivered Mail Returned to Sender', 'Delivery Status Notification (Failure)', 'Out of office'],
            ...['unsubscribe {{tag}}.abcdef', 'Re: unsubscribe abc.def', 'Warning: message delayed', ''],
          ),
        ],
        [1, reportValue],
      ),
      from: pick('MAILER-DAEMON@elsewhere.test', 'postmaster@elsewhere.test', 'someone@elsewhere.test', ''),
      // The fields of the report as a whole, then each recipient's (DSN); each with fuzzed values and extras.
      fields: fc.tuple(
        weighted<string>([3, pick('abuse', 'fraud', 'not-spam', 'virus', 'other')], [2, reportValue]),
        fc.array(
          weighted<string>([3, pick('<{{tag}}-0@elsewhere.test>', '{{tag}}-1@elsewhere.test')], [1, reportValue]),
          {
            maxLength: 2,
          },
        ),
        weighted<string>([2, pick('<{{verp}}>', '<{{verp-forged}}>')], [1, reportValue]),
        reportFields(4),
      ),
      recipients: fc.array(
        fc.tuple(
          weighted<string>(
            [3, pick('rfc822; {{tag}}-0@elsewhere.test', 'rfc822; <{{tag}}-1@elsewhere.test>')],
            [1, reportValue],
          ),
          weighted<string>([3, pick('failed', 'delayed', 'delivered')], [1, reportValue]),
          weighted<string>([3, pick('5.1.1', '4.2.2', '5.7.1', '5.0.0')], [1, reportValue]),
          weighted<string>([2, pick('smtp; 550 5.1.1 No such user', 'smtp; 552 5.2.2 Mailbox full')], [1, reportValue]),
          reportFields(2),
        ),
        { maxLength: 3 },
      ),
      text: weighted<string>(
        [
          3,
          pick(
            "I'm afraid I wasn't able to deliver your message to the following addresses.\r\n\r\n<{{tag}}-0@elsewhere.test>:\r\n550 5.1.1 No such user",
            'This is the mail system at host mx.elsewhere.test.\r\n\r\n550 5.7.1 rejected (#5.7.1)',
            'Your message was delivered.',
          ),
        ],
        [1, reportValue],
      ),
      original: pick(
        'Return-Path: <{{verp}}>',
        'Return-Path: <{{verp-forged}}>',
        'To: {{tag}}-0@elsewhere.test',
        'Return-Path: <{{verp}}>\r\nTo: a@elsewhere.test, c@elsewhere.test',
        '',
      ),
      boundary: pick('b', '"b b"', ''),
      eol: lineEnd,
      smuggle: fc.option(smuggled(false), { freq: 3 }),
      end: dataEnd,
    })
    .map((r) => {
      const b = r.boundary.replaceAll('"', '');
      const fields = (list: [string, string][]) => list.map(([k, v]) => `${k}: ${v}`).join(r.eol);
      // The tag makes each session's message its own: the MX records a message once per recipient.
      const head = [
        `From: ${r.from}`,
        'To: {{verp}}',
        `Subject: ${r.subject}`,
        'X-Session: {{tag}}',
        'MIME-Version: 1.0',
      ];
      const pieces: Piece[] = [];
      if (r.kind === 'text') pieces.push([...head, 'Content-Type: text/plain', '', r.text].join(CRLF));
      else
        pieces.push(
          [
            ...head,
            `Content-Type: multipart/report; report-type=${r.kind}${r.boundary ? `; boundary=${r.boundary}` : ''}`,
            '',
            `--${b}`,
            'Content-Type: text/plain',
            '',
            r.text,
            `--${b}`,
            `Content-Type: message/${r.kind}`,
            '',
            [
              r.kind === 'feedback-report'
                ? fields([
                    ['Feedback-Type', r.fields[0]],
                    ['User-Agent', 'Fuzz/1.0'],
                    ['Version', '1'],
                    ...r.fields[1].map((to): [string, string] => ['Original-Rcpt-To', to]),
                    ['Original-Mail-From', r.fields[2]],
                    ...r.fields[3],
                  ])
                : fields([['Reporting-MTA', 'dns; mx.elsewhere.test'], ...r.fields[3]]),
              ...r.recipients.map(([recipient, action, status, diagnostic, extra]) =>
                fields([
                  ['Final-Recipient', recipient],
                  ['Action', action],
                  ['Status', status],
                  ['Diagnostic-Code', diagnostic],
                  ...extra,
                ]),
              ),
            ].join(`${r.eol}${r.eol}`),
            '',
            `--${b}`,
            'Content-Type: text/rfc822-headers',
            '',
            r.original,
            `--${b}--`,
          ].join(CRLF),
        );
      if (r.smuggle !== null) pieces.push(r.smuggle);
      pieces.push(r.end);
      return pieces;
    });
}

/** A message to the return-path domain (a DSN's MAIL FROM is mostly the null sender), maybe also to the receiving one. */
function returnPathTransaction(): fc.Arbitrary<Piece[][]> {
  return fc
    .record({
      mail: envelopeCommand('MAIL', weighted<string>([4, fc.constant('')], [1, address('mx-mail')])),
      rcpts: fc.array(envelopeCommand('RCPT', returnPathRecipient), { minLength: 1, maxLength: 3 }),
      receiving: fc.option(rcptTo(false), { freq: 5 }),
      body: returnPathBody(),
      pipelined: fc.boolean(),
    })
    .map(({ mail, rcpts, receiving, body, pipelined }) => {
      const commands = [mail, ...rcpts, ...(receiving === null ? [] : [receiving]), 'DATA'].map((c): Piece[] => [
        c,
        CRLF,
      ]);
      return pipelined ? [[...commands.flat(), ...body]] : [...commands, body];
    });
}

function line(command: fc.Arbitrary<string>): fc.Arbitrary<Piece[][]> {
  return fc.tuple(command, lineEnd).map(([c, e]) => [[c, e]]);
}

/** MAIL, RCPTs, DATA and a message: separate steps, or pipelined in one write (RFC 2920). */
function transaction(relay: boolean): fc.Arbitrary<Piece[][]> {
  return fc
    .record({
      mail: mailFrom(relay),
      rcpts: fc.array(rcptTo(relay), { minLength: 1, maxLength: 3 }),
      data: weighted<string>([10, fc.constant('DATA')], [1, pick('data', 'DATA x', 'DATA\u0000')]),
      body: messageBody(relay),
      pipelined: fc.boolean(),
    })
    .map(({ mail, rcpts, data, body, pipelined }) => {
      const commands = [mail, ...rcpts, data].map((c): Piece[] => [c, CRLF]);
      return pipelined ? [[...commands.flat(), ...body]] : [...commands, body];
    });
}

const pipelinedBurst = fc
  .array(fc.oneof(otherCommand, rcptTo(false), greeting), { minLength: 2, maxLength: 5 })
  .map((commands): Piece[][] => [commands.flatMap((c) => [c, CRLF])]);

/** More RCPTs than a transaction takes (50): 452 past the cap. */
function manyRecipients(relay: boolean): fc.Arbitrary<Piece[][]> {
  return fc
    .integer({ min: 45, max: 60 })
    .map((count): Piece[][] => [
      Array.from({ length: count }, (_, i) => `RCPT TO:<{{tag}}-m${i}@${relay ? '{{rcpt}}' : '{{in}}'}>${CRLF}`),
    ]);
}

/** STARTTLS, maybe with a command injected after it in the same write (answered only in plaintext, never). */
const starttls = fc
  .option(pick('RSET', 'NOOP', 'MAIL FROM:<injected@evil.test>', 'AUTH PLAIN {{plain}}'), { freq: 3 })
  .map((injected): Piece[][] => [['STARTTLS', CRLF, ...(injected === null ? [] : [injected, CRLF])]]);

function commandSteps(relay: boolean): fc.Arbitrary<Piece[][]> {
  return weighted<Piece[][]>(
    [6, transaction(relay)],
    [4, line(otherCommand)],
    [2, line(greeting)],
    [2, line(rcptTo(relay))],
    [1, line(mailFrom(relay))],
    [1, pipelinedBurst],
    [1, line(longLine)],
    [1, rawBytes.map((b): Piece[][] => [[b]])],
    [1, starttls],
    [1, manyRecipients(relay)],
    ...(relay ? [] : ([[3, returnPathTransaction()]] as [number, fc.Arbitrary<Piece[][]>][])),
  );
}

const flatten = (groups: Piece[][][]) => groups.flat();

/** Random MX sessions: EHLO first most of the time, then anything. */
export function mxSessions(): fc.Arbitrary<SmtpSession> {
  return fc
    .record({
      first: weighted<Piece[][]>(
        [6, fc.constant([['EHLO client.sender.test', CRLF]])],
        [2, line(greeting)],
        [1, fc.constant([])],
      ),
      steps: fc.array(commandSteps(false), { minLength: 1, maxLength: 8 }),
      end: weighted<'quit' | 'close'>([4, fc.constant('quit')], [1, fc.constant('close')]),
    })
    .map(({ first, steps, end }) => withPreview({ listener: 'mx', steps: [...first, ...flatten(steps)], end }));
}

/** AUTH as the relay takes it (PLAIN or LOGIN, initial response or not), or garbage. */
const auth = weighted<Piece[][]>(
  [
    6,
    pick<Piece[][]>(
      [['AUTH PLAIN {{plain}}', CRLF]],
      [['AUTH PLAIN {{plain-resend}}', CRLF]],
      [
        ['AUTH PLAIN', CRLF],
        ['{{plain}}', CRLF],
      ],
      [
        ['AUTH LOGIN', CRLF],
        ['{{login-user}}', CRLF],
        ['{{login-key}}', CRLF],
      ],
      [
        ['AUTH LOGIN {{login-user}}', CRLF],
        ['{{login-key}}', CRLF],
      ],
      [['auth plain {{plain}}', CRLF]],
    ),
  ],
  [
    3,
    pick<Piece[][]>(
      [['AUTH PLAIN !!!not-base64', CRLF]],
      [['AUTH PLAIN {{plain-admin}}', CRLF]],
      [['AUTH PLAIN {{plain-wrong}}', CRLF]],
      [['AUTH PLAIN {{plain-long}}', CRLF]],
      [['AUTH PLAIN {{plain-nul}}', CRLF]],
      [['AUTH PLAIN =', CRLF]],
      [
        ['AUTH PLAIN', CRLF],
        ['*', CRLF],
      ],
      [
        ['AUTH LOGIN', CRLF],
        ['*', CRLF],
      ],
      [
        ['AUTH LOGIN', CRLF],
        ['{{login-user}}', CRLF],
        ['', CRLF],
      ],
      [['AUTH CRAM-MD5', CRLF]],
      [['AUTH XOAUTH2 dXNlcj1ib2IBYXV0aD1CZWFyZXIgeAEB', CRLF]],
      [['AUTH', CRLF]],
      [['AUTH PLAIN {{plain}} extra', CRLF]],
      [['AUTH PLAIN ' + 'QUFB'.repeat(5000), CRLF]],
    ),
  ],
  [1, fc.base64String({ maxLength: 80 }).map((b): Piece[][] => [[`AUTH PLAIN ${b}`, CRLF]])],
  [1, fc.constant([])],
);

/**
 * Random relay sessions: on the STARTTLS port a plaintext part (where AUTH must get 538 and MAIL 530), then
 * usually STARTTLS; on either port then EHLO, AUTH (valid, garbage or none) and anything.
 */
export function relaySessions(): fc.Arbitrary<SmtpSession> {
  const plain = fc.array(
    weighted<Piece[][]>([3, line(greeting)], [2, auth], [2, line(otherCommand)], [1, transaction(true)]),
    { maxLength: 3 },
  );
  return fc
    .record({
      listener: weighted<Listener>([3, fc.constant('relay')], [1, fc.constant('relay-tls')]),
      ehlo: weighted<Piece[][]>(
        [8, fc.constant([['EHLO client.sender.test', CRLF]])],
        [1, line(greeting)],
        [1, fc.constant([])],
      ),
      plain,
      starttls: weighted<Piece[][]>([8, fc.constant([['STARTTLS', CRLF]])], [1, starttls], [1, fc.constant([])]),
      ehloAgain: weighted<Piece[][]>([8, fc.constant([['EHLO client.sender.test', CRLF]])], [1, fc.constant([])]),
      auth,
      // Usually a transaction first, so that authenticated sessions reach DATA before the budget of
      // unrecognised commands (10) runs out.
      first: weighted<Piece[][]>([2, transaction(true)], [1, fc.constant([])]),
      steps: fc.array(commandSteps(true), { minLength: 1, maxLength: 6 }),
      end: weighted<'quit' | 'close'>([4, fc.constant('quit')], [1, fc.constant('close')]),
    })
    .map((s) => {
      const before = s.listener === 'relay' ? [...s.ehlo, ...flatten(s.plain), ...s.starttls] : [];
      return withPreview({
        listener: s.listener,
        steps: [...before, ...s.ehloAgain, ...s.auth, ...s.first, ...flatten(s.steps)],
        end: s.end,
      });
    });
}

/** fast-check prints a counterexample with this: each step on a line, long text cut. */
function withPreview(session: SmtpSession): SmtpSession {
  return Object.assign(session, {
    [fc.toStringMethod]: () =>
      `${session.listener} session (${session.end}):\n${session.steps
        .map(
          (step) =>
            `  ${step.map((p) => (typeof p === 'string' ? preview(p, 120) : `<bytes ${JSON.stringify(p.bytes)}>`)).join(' + ')}`,
        )
        .join('\n')}`,
  });
}

// ------------------------------------------------------------------------------------------ the stores

/** Runs one SQL query (a pg Pool's query, rows only). */
export type Query = <Row>(text: string, values: unknown[]) => Promise<Row[]>;

/** The index of the first CR or LF that is not part of a CRLF, or -1. */
export function bareLineEnd(raw: Buffer): number {
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x0d && raw[i + 1] === 0x0a) i++;
    else if (raw[i] === 0x0d || raw[i] === 0x0a) return i;
  }
  return -1;
}

const EMAIL_ID = /queued as ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;

/**
 * The per-session store checks of one team. MX: the received emails from the session's address are exactly
 * its messages answered 250 with a recipient at the receiving domain (no second message out of one DATA),
 * and mail is recorded at the return-path domain only for messages answered 250 with a recipient there
 * (once per recipient and distinct message at most). Relay: the sender's emails with the session's tag in
 * their subject are exactly the ones its 250s name. Each stored with CRLF line ends only. `totals` counts
 * the messages answered 250 of every session checked.
 */
export function createStoreChecks(
  query: Query,
  teamId: string,
): { verifyStored: SmtpTarget['verifyStored']; totals: { mx: number; relay: number } } {
  const totals = { mx: 0, relay: 0 };
  return {
    totals,
    async verifyStored({ listener, tag, address, accepted }) {
      const problems: string[] = [];
      if (listener === 'mx') {
        // smtp-server reports an IPv4 client as such; the IPv4-mapped form is counted too.
        const addresses = [address, `::ffff:${address}`];
        const received = accepted.filter((message) => message.receiving > 0).length;
        totals.mx += received;
        const rows = await query<{ id: string; content: Buffer }>(
          `select e.id, r.content from inbound_smtp.received_emails e
           join inbound_smtp.received_raw_messages r on r.id = e.raw_id
           where e.team_id = $1 and e.remote_address = any($2)`,
          [teamId, addresses],
        );
        if (rows.length !== received)
          problems.push(
            `${received} DATA answered 250 for the receiving domain but ${rows.length} received emails stored`,
          );
        for (const row of rows) {
          const at = bareLineEnd(row.content);
          if (at >= 0) problems.push(`received email ${row.id} stored with a bare CR/LF at byte ${at}`);
        }
        const returnPath = accepted.filter((message) => message.returnPath > 0);
        const most = returnPath.reduce((sum, message) => sum + message.returnPath, 0);
        const recorded = await query<{ count: string }>(
          'select count(*) from inbound_smtp.return_path_mail where team_id = $1 and remote_address = any($2)',
          [teamId, addresses],
        );
        const count = Number(recorded[0]?.count ?? 0);
        if (count > most || (returnPath.length > 0 && count === 0))
          problems.push(
            `${returnPath.length} DATA answered 250 for the return path (${most} recipients) but ${count} recorded`,
          );
        return problems;
      }
      totals.relay += accepted.length;
      const rows = await query<{ id: string; mime: Buffer | null }>(
        `select e.id, r.mime from sender.emails e left join sender.raw_emails r on r.email_id = e.id
         where e.team_id = $1 and e.subject like $2`,
        [teamId, `%${tag}%`],
      );
      if (rows.length !== accepted.length)
        problems.push(`${accepted.length} DATA answered 250 but the sender stored ${rows.length} emails`);
      for (const { reply } of accepted) {
        const id = EMAIL_ID.exec(reply.lines.join(' '))?.[1];
        if (!id) problems.push(`a 250 to DATA without the email's id: ${reply.lines.join(' ')}`);
        else if (!rows.some((row) => row.id === id))
          problems.push(`250 names email ${id}, which the sender does not have`);
      }
      for (const row of rows) {
        const at = row.mime ? bareLineEnd(row.mime) : -1;
        if (!row.mime) problems.push(`email ${row.id} has no raw MIME`);
        else if (at >= 0) problems.push(`email ${row.id} relayed with a bare CR/LF at byte ${at}`);
      }
      return problems;
    },
  };
}

/**
 * The MX's return-path placeholders: `rp`, VERP addresses there that verify (`verp` with a recipient
 * position, `verp-x` without) and one whose tag does not (`verp-forged`), for an email id that need not exist.
 */
export function returnPathVars(returnPath: string, secretKey: string): Record<string, string> {
  const key = verpKeyOf(secretKey);
  const emailId = '0195f3a2-0000-7000-8000-00000000f022';
  const verp = verpAddress({ emailId, recipient: 0, returnPath, key });
  return {
    rp: returnPath,
    verp,
    'verp-x': verpAddress({ emailId, returnPath, key }),
    'verp-forged': verp.replace(/\.[a-z2-7]{10}@/, '.aaaaaaaaaa@'),
  };
}

/** The relay's AUTH placeholders for an API key: valid PLAIN and LOGIN blobs, and garbage ones. */
export function relayAuthVars(apiKey: string): Record<string, string> {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return {
    plain: b64(`\0postline\0${apiKey}`),
    'plain-resend': b64(`\0RESEND\0${apiKey}`),
    'login-user': b64('postline'),
    'login-key': b64(apiKey),
    'plain-admin': b64(`\0admin\0${apiKey}`),
    'plain-wrong': b64('\0postline\0pl_not_a_real_key_0000000000'),
    'plain-long': b64(`\0postline\0${'k'.repeat(300)}`),
    'plain-nul': b64(`\0postline\0${apiKey}\0x`),
  };
}
