// Generators of DATA payloads: messages with odd headers and line ends, smuggling attempts, and bounces,
// complaints and unsubscribe requests to the return-path domain.
import fc from 'fast-check';
import { CRLF, lineEnd, pick, rawBytes, smallText, unicodeText, weighted } from './command-generators.ts';
import type { Piece } from './session.ts';

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
export function messageBody(relay: boolean): fc.Arbitrary<Piece[]> {
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
export function returnPathBody(): fc.Arbitrary<Piece[]> {
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
