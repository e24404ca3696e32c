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
//
// The pieces live in ./smtp/: the session's types (session.ts), its generators (command-, message- and
// session-generators.ts), the reply reader and input model, the reply checks, the connection, the runner,
// the store checks and the placeholder values. This file is the one the tests import.
export { createInputModel } from './smtp/input-model.ts';
export { relayAuthVars, returnPathVars } from './smtp/placeholders.ts';
export { createReplyReader, replyLineProblem } from './smtp/replies.ts';
export { checkReply, initialState } from './smtp/reply-checks.ts';
export { fuzzSmtp, newStats, runSession } from './smtp/runner.ts';
export { SMUGGLING_ENDS, smuggledMessage } from './smtp/message-generators.ts';
export { mxSessions, relaySessions } from './smtp/session-generators.ts';
export type { Piece, SessionResult, SmtpSession, SmtpTarget } from './smtp/session.ts';
export { createStoreChecks } from './smtp/store-checks.ts';
