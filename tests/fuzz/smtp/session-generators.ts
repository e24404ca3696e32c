// Generators of whole sessions for the MX and the relay, made of the command and message generators.
import fc from 'fast-check';
import {
  address,
  CRLF,
  envelopeCommand,
  greeting,
  lineEnd,
  longLine,
  mailFrom,
  otherCommand,
  pick,
  rawBytes,
  rcptTo,
  returnPathRecipient,
  weighted,
} from './command-generators.ts';
import { messageBody, returnPathBody } from './message-generators.ts';
import { preview, type Listener, type Piece, type SmtpSession } from './session.ts';

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
