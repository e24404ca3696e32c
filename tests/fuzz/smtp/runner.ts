// Running sessions: one session against a listener with its replies checked, and many at once under
// fast-check, which shrinks a failing session to the smallest that still fails.
import fc from 'fast-check';
import { openConnection } from './connection.ts';
import { createInputModel, type Unit } from './input-model.ts';
import { checkReply, initialState } from './reply-checks.ts';
import { preview, render, type SessionResult, type SmtpSession, type SmtpTarget } from './session.ts';

/** How long one reply may take, in milliseconds (the MX parses and checks DNS before its DATA 250). */
const REPLY_TIMEOUT_MS = 15_000;
/** The server closes within this after its 221 or 421 (smtp-server's half-close deadline is 5 s). */
const CLOSE_TIMEOUT_MS = 10_000;
/** A whole session never runs longer than this (checked between steps). */
const SESSION_DEADLINE_MS = 90_000;

let sessionCount = 0;

/**
 * A loopback source address of its own for each session (Linux routes all of 127/8 to the loopback): AUTH
 * failures lock out one address, not the run, and what the MX stored is counted per session by its address.
 */
function sourceAddress(n: number): string {
  return `127.${1 + (Math.floor(n / 254 / 254) % 254)}.${1 + (Math.floor(n / 254) % 254)}.${1 + (n % 254)}`;
}

function describeUnit(unit: Unit): string {
  return unit.kind === 'command' ? `C: ${preview(unit.line.toString('utf8'))}` : `C: <DATA ${unit.bytes.length} bytes>`;
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
