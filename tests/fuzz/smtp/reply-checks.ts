// Whether each reply fits the command or message it answers, given what the session has told so far.
import type { Unit } from './input-model.ts';
import type { AcceptedMessage, Listener, SmtpReply } from './session.ts';

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
