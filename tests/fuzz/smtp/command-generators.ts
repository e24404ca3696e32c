// Generators of SMTP command lines: greetings, addresses, MAIL/RCPT parameters, other verbs, long lines,
// and the building blocks the message and session generators share.
import fc from 'fast-check';

export const CRLF = '\r\n';
export const pick = <T>(...values: T[]) => fc.constantFrom(...values);
export const weighted = <T>(...entries: [number, fc.Arbitrary<T>][]) =>
  fc.oneof(...entries.map(([weight, arbitrary]) => ({ weight, arbitrary })));

/** Mostly CRLF; sometimes a bare LF (a line end for smtp-server), a bare CR (not one), or nothing. */
export const lineEnd = weighted<string>(
  [24, fc.constant(CRLF)],
  [2, fc.constant('\n')],
  [1, pick('\r', '\r\r\n', '\n\r', '')],
);

export const smallText = fc.string({ maxLength: 24 });
export const unicodeText = fc.string({ unit: 'grapheme', maxLength: 16 });
export const rawBytes = fc.uint8Array({ maxLength: 40 }).map((b) => ({ bytes: [...b] }));

const hostArgument = weighted<string>(
  [6, pick('client.test', 'mail.sender.test', '[127.0.0.1]', '[IPv6:::1]', 'localhost')],
  [2, pick('', ' ', 'a b', '-bad-', 'a..b', '_x.test', '[300.1.1.1]', 'münchen.example', 'x\u0000y', 'x'.repeat(300))],
  [1, smallText],
  [1, unicodeText],
);

export const greeting = fc
  .tuple(weighted<string>([8, fc.constant('EHLO')], [3, pick('HELO', 'ehlo', 'Helo', 'LHLO', 'EHLO ')]), hostArgument)
  .map(([verb, host]) => `${verb} ${host}`);

/** Addresses for MAIL or RCPT; each one the MX could take carries the session's tag. */
export function address(kind: 'mx-rcpt' | 'relay-rcpt' | 'mx-mail' | 'relay-mail'): fc.Arbitrary<string> {
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

export function envelopeCommand(verb: 'MAIL' | 'RCPT', addresses: fc.Arbitrary<string>): fc.Arbitrary<string> {
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

export const mailFrom = (relay: boolean) =>
  envelopeCommand('MAIL', weighted<string>([1, fc.constant('')], [4, address(relay ? 'relay-mail' : 'mx-mail')]));
export const rcptTo = (relay: boolean) => envelopeCommand('RCPT', address(relay ? 'relay-rcpt' : 'mx-rcpt'));

export const otherCommand = weighted<string>(
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
export const longLine = fc
  .tuple(
    pick('NOOP ', 'EHLO ', 'MAIL FROM:<', 'RCPT TO:<', 'XYZZY ', 'AUTH PLAIN '),
    weighted<number>([3, fc.integer({ min: 513, max: 4000 })], [1, pick(16 * 1024 + 1, 70_000)]),
  )
  .map(([verb, length]) => `${verb}${'x'.repeat(length)}`);

/**
 * Mailboxes at the return-path domain: VERP addresses (with a recipient position, without, upper-cased,
 * with a forged tag), the report and unsubscribe mailboxes, and ones the MX refuses.
 */
export const returnPathRecipient = weighted<string>(
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
