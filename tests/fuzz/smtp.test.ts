// SMTP fuzzing of the MX and the relay (see smtp-fuzz.ts for what is generated and checked): targeted
// sessions first, one per property, so that each property is shown able to fail, then random sessions.
// SMTP_FUZZ_RUNS sessions per listener; `npm run fuzz` (FUZZ_RUNS=100000) runs FUZZ_RUNS/10 of each.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  createReceivingDomain,
  createVerifiedDomain,
  observeBroker,
  startDeliveringSystem,
  type BrokerObserver,
  waitFor,
  type DnsServer,
  type SinkMx,
  type System,
  testResend,
} from '@postline/testing';
import {
  checkReply,
  createInputModel,
  createReplyReader,
  createStoreChecks,
  fuzzSmtp,
  initialState,
  mxSessions,
  newStats,
  relayAuthVars,
  relaySessions,
  replyLineProblem,
  returnPathVars,
  runSession,
  smuggledMessage,
  SMUGGLING_ENDS,
  type Piece,
  type SessionResult,
  type SmtpSession,
  type SmtpTarget,
} from './smtp-fuzz.ts';

// Sessions per listener. An SMTP session costs about as much as ten API requests, so the long run
// (FUZZ_RUNS=100000) makes 10,000 of each (about 7 minutes per listener on 2 cores); `npm test` makes 150 of
// each (the whole file takes about 45 s, the system's start included). SMTP_FUZZ_SEED replays a run.
const runs = Number(
  process.env.SMTP_FUZZ_RUNS ?? (process.env.FUZZ_RUNS ? Math.ceil(Number(process.env.FUZZ_RUNS) / 10) : 150),
);
const seed = Number(process.env.SMTP_FUZZ_SEED ?? Date.now() % 1_000_000_000);
/** Sessions at once per listener, well under the per-address cap of 20 (each session has its own address too). */
const LANES = 3;

const RCPT = 'fuzz-rcpt.example.net';
const IN = 'fuzz-in.example.com';
const OUT = 'fuzz-out.example.com';
const DOMAINS = { receiving: IN, returnPath: `send.${OUT}` };

let system: System;
let dns: DnsServer;
let sink: SinkMx;
let events: BrokerObserver;
let pool: pg.Pool;
let target: SmtpTarget;
let stores: ReturnType<typeof createStoreChecks>;
let teamId: string;
/** The team's emails before any relay session (the domain's probe). */
let emailsBefore: number;

const countOf = async (sql: string, values: unknown[]) =>
  Number((await pool.query<{ count: string }>(sql, values)).rows[0]?.count ?? -1);

beforeAll(async () => {
  ({ dns, sink, system } = await startDeliveringSystem(RCPT, { LOG_LEVEL: 'error' }));
  events = await observeBroker({
    amqpUrl: String(system.env.AMQP_URL),
    prefix: String(system.env.BROKER_PREFIX),
    bindings: [{ exchange: 'events', pattern: 'internal.domain.state' }],
  });
  const team = await system.admin('team', 'create', '--name', 'smtp-fuzz');
  teamId = String(team.team_id);
  const apiKey = String(team.api_key);
  // The fuzzer is not testing the rate limit.
  await system.admin('team', 'set-rate-limit', '--team', teamId, '--per-second', '100000');
  const resend = testResend(apiKey, system.apiUrl);
  await createReceivingDomain({ resend, dns, events, name: IN, mxPort: system.smtp.mx });
  await createVerifiedDomain({ resend, dns, events, name: OUT });
  pool = new pg.Pool({ connectionString: String(system.env.DATABASE_URL), max: 4 });
  // The MX takes bounces and complaints at the sending domain's return path once its read model has it.
  let returnPath = '';
  await waitFor('the MX to know the return path', async () => {
    const known = await pool.query<{ return_path: string }>(
      'select return_path from inbound_smtp.receiving_domains where name = $1',
      [OUT],
    );
    returnPath = known.rows[0]?.return_path ?? '';
    return returnPath !== '';
  });
  stores = createStoreChecks(
    async <Row>(text: string, values: unknown[]) => (await pool.query(text, values)).rows as Row[],
    teamId,
  );
  const inbound = system.services['inbound-smtp'].process;
  target = {
    host: '127.0.0.1',
    ports: { mx: system.smtp.mx, relay: system.smtp.relay, 'relay-tls': system.smtp.relayTls },
    vars: {
      in: IN,
      out: OUT,
      rcpt: RCPT,
      ...relayAuthVars(apiKey),
      ...returnPathVars(returnPath, String(system.env.POSTLINE_SECRET_KEY)),
    },
    receivingDomain: IN,
    returnPathDomain: returnPath,
    alive: () => inbound.exitCode === null && inbound.signalCode === null,
    verifyStored: (stored) => stores.verifyStored(stored),
    diagnostics: () =>
      `inbound-smtp log (last lines):\n${system.services['inbound-smtp'].output.join('').split('\n').slice(-6).join('\n').slice(-3000)}`,
  };
  emailsBefore = await countOf('select count(*) from sender.emails where team_id = $1', [teamId]);
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await events?.close();
  await system?.stop();
  await sink?.close();
  await dns?.close();
}, 30_000);

const CRLF = '\r\n';
const session = (listener: SmtpSession['listener'], steps: (string | Piece[])[]): SmtpSession => ({
  listener,
  steps: steps.map((step) => (typeof step === 'string' ? [step, CRLF] : step)),
  end: 'quit',
});
/** The reply codes of a session, in order (the greeting left out). */
const codes = (result: SessionResult) => result.codes;
const reply = (code: number, text = '') => ({ code, lines: [text] });
const line = (text: string) => ({ kind: 'command' as const, line: Buffer.from(text) });

describe('the checks', () => {
  it('flags malformed reply lines: no code, a code outside 2xx-5xx, a control character, past 512 octets', () => {
    for (const good of ['250', '250 ok', '250-first', '554 5.7.1 <ü@x.test>: no'])
      expect(replyLineProblem(Buffer.from(good))).toBeUndefined();
    for (const bad of ['25 ok', '250ok', '600 x', '199 x', 'ok', '250 a\u0000b', '250 a\rb', `250 ${'x'.repeat(510)}`])
      expect([bad, replyLineProblem(Buffer.from(bad))]).toEqual([bad, expect.any(String)]);
    const reader = createReplyReader();
    reader.push(Buffer.from('250-one\r\n251 two\r\n'));
    expect(reader.problems).toEqual([expect.stringContaining('continues a 250 reply')]);
  });

  it('pairs each reply with a line or a message the way smtp-server reads them (a bare LF ends a line, not a message)', () => {
    const input = createInputModel();
    input.append(Buffer.from(`NOOP\nRSET\rX\r\nDATA\r\nhello\n.\nMAIL FROM:<a@b>\r\n.\r\nQUIT\r\n`));
    expect(input.next()).toEqual(line('NOOP'));
    expect(input.next()).toEqual(line('RSET\rX'));
    expect(input.next()).toEqual(line('DATA'));
    input.enterData();
    expect(input.next()).toEqual({ kind: 'data', bytes: Buffer.from('hello\n.\nMAIL FROM:<a@b>\r\n.\r\n') });
    expect(input.next()).toEqual(line('QUIT'));
    expect(input.next()).toBeUndefined();
  });

  it('fails a 250 to DATA with every recipient refused, RCPT outside the domain, and relay mail without AUTH', () => {
    const mx = initialState('mx', DOMAINS);
    expect(checkReply(mx, line('MAIL FROM:<a@sender.test>'), reply(250))).toEqual([]);
    expect(checkReply(mx, line('RCPT TO:<a@elsewhere.test>'), reply(250))).toEqual([
      expect.stringContaining('at its domains only'),
    ]);
    const refused = initialState('mx', DOMAINS);
    expect(checkReply(refused, line('DATA'), reply(354))).toEqual([expect.stringContaining('every recipient')]);
    expect(checkReply(refused, { kind: 'data', bytes: Buffer.from('.\r\n') }, reply(250))).toEqual([
      '250 to a message whose recipients were all refused',
    ]);
    expect(
      checkReply(initialState('mx', DOMAINS), { kind: 'data', bytes: Buffer.from('.\r\n') }, reply(451)),
    ).toHaveLength(1);
    const relay = initialState('relay', DOMAINS);
    expect(checkReply(relay, line('AUTH PLAIN x'), reply(235))).toEqual([expect.stringContaining('before TLS')]);
    const noAuth = initialState('relay-tls', DOMAINS);
    expect(checkReply(noAuth, line('MAIL FROM:<a@b.test>'), reply(250))).toHaveLength(1);
    expect(checkReply(noAuth, line('RCPT TO:<a@b.test>'), reply(250))).toHaveLength(1);
    expect(checkReply(noAuth, line('FOO'), reply(250))).toEqual([expect.stringContaining('unknown verb')]);
  });
});

describe('the MX', () => {
  it.each(SMUGGLING_ENDS.slice(0, 4))(
    'stores one message, normalised, for a DATA that smuggles a second one after %j',
    async (end) => {
      const result = await runSession(
        target,
        session('mx', [
          'EHLO client.sender.test',
          'MAIL FROM:<someone@sender.test>',
          'RCPT TO:<{{tag}}-0@{{in}}>',
          'DATA',
          [
            `From: someone@sender.test${CRLF}Subject: {{tag}}${CRLF}${CRLF}hello${end}${smuggledMessage(false, CRLF)}${end}QUIT${CRLF}bye${CRLF}.${CRLF}`,
          ],
        ]),
      );
      // The store check counts every received email for `{{tag}}-*`, the smuggled `{{tag}}-evil` too.
      expect(result.problems).toEqual([]);
      expect(codes(result)).toEqual([250, 250, 250, 354, 250, 221]);
      const rows = await pool.query<{ content: Buffer }>(
        `select r.content from inbound_smtp.received_emails e join inbound_smtp.received_raw_messages r on r.id = e.raw_id
         where $1 = any(e.received_for)`,
        [`${result.tag}-0@${IN}`],
      );
      expect(rows.rows).toHaveLength(1);
      expect(rows.rows[0]?.content.toString()).toContain('\r\nMAIL FROM:<evil@evil.test>\r\n');
    },
  );

  it('stores two messages for two DATA pipelined after a real end of data (the count sees a second message)', async () => {
    const result = await runSession(
      target,
      session('mx', [
        'EHLO client.sender.test',
        [
          `MAIL FROM:<a@sender.test>${CRLF}RCPT TO:<{{tag}}-0@{{in}}>${CRLF}DATA${CRLF}`,
          `Subject: one${CRLF}${CRLF}one${CRLF}.${CRLF}`,
          `MAIL FROM:<b@sender.test>${CRLF}RCPT TO:<{{tag}}-1@{{in}}>${CRLF}DATA${CRLF}Subject: two${CRLF}${CRLF}two${CRLF}.${CRLF}`,
        ],
      ]),
    );
    expect(result.problems).toEqual([]);
    expect(result.accepted).toHaveLength(2);
    expect(
      await countOf('select count(*) from inbound_smtp.received_emails where received_for && $1', [
        [`${result.tag}-0@${IN}`, `${result.tag}-1@${IN}`],
      ]),
    ).toBe(2);
  });

  it('refuses RCPT outside its domains and DATA when every recipient was refused; the message lines are then commands', async () => {
    const result = await runSession(
      target,
      session('mx', [
        'EHLO client.sender.test',
        'MAIL FROM:<a@sender.test>',
        'RCPT TO:<{{tag}}-0@elsewhere.test>',
        'RCPT TO:<{{tag}}-0@sub.{{in}}>',
        [`DATA${CRLF}Subject: x${CRLF}${CRLF}RCPT TO:<{{tag}}-1@elsewhere.test>${CRLF}.${CRLF}`],
      ]),
    );
    expect(result.problems).toEqual([]);
    expect(codes(result)).toEqual([250, 250, 550, 550, 503, 500, 500, 550, 500, 221]);
    expect(result.accepted).toEqual([]);
  });

  it('answers NUL bytes, bare line ends, long lines and unknown verbs with well-formed refusals, and a 70 KB line with 421', async () => {
    const result = await runSession(
      target,
      session('mx', [
        ['EHLO client.sender.test\n'],
        `NOOP ${'x'.repeat(600)}`,
        'MAIL FROM:<a\u0000b@sender.test>',
        ['MAIL FROM:<a@sender.test> SIZE=99999999999\r\n'],
        'XYZZY',
        'XCLIENT ADDR=10.0.0.1',
        `RCPT TO:<${'a'.repeat(70_000)}@{{in}}>`,
        'NOOP',
      ]),
    );
    expect(result.problems).toEqual([]);
    expect(codes(result)).toEqual([250, 250, 501, 552, 500, 550, 421]);
  });

  it('answers nothing a client pipelined after STARTTLS (no command injection)', async () => {
    const result = await runSession(
      target,
      session('mx', [
        'EHLO client.sender.test',
        [`STARTTLS${CRLF}MAIL FROM:<injected@evil.test>${CRLF}`],
        'EHLO client.sender.test',
        'MAIL FROM:<a@sender.test>',
      ]),
    );
    expect(result.problems).toEqual([]);
    expect(codes(result)).toEqual([250, 220, 250, 250, 221]);
  });

  // Found by the fuzzer: the received email's headers (jsonb) and its email.received event (jsonb) refuse
  // `\u0000` and lone surrogates, so the insert fails and the MX answers 451 (the sender retries forever).
  it.each([
    ['a NUL in a header name', 'X-Nul\u0000Name: v'],
    ['a lone UTF-16 surrogate in the Subject', 'Subject: =?UTF-16BE?B?2AA=?='],
    ['a lone UTF-16 surrogate in another header', 'X-Surrogate: =?UTF-16LE?B?AN4=?='],
  ])('answers a message with %s with 250 or a 5xx, never 451', async (_what, header) => {
    const result = await runSession(
      target,
      session('mx', [
        'EHLO client.sender.test',
        'MAIL FROM:<someone@sender.test>',
        'RCPT TO:<{{tag}}-0@{{in}}>',
        'DATA',
        [`From: someone@sender.test${CRLF}${header}${CRLF}${CRLF}hello${CRLF}.${CRLF}`],
      ]),
    );
    expect(result.problems).toEqual([]);
  });

  it(
    `answers ${runs} random sessions with well-formed replies, never a second message, never a message for refused recipients`,
    async () => {
      const stats = newStats();
      await fuzzSmtp({ target, sessions: mxSessions(), runs, lanes: LANES, seed, stats });
      expect(stats.sessions).toBeGreaterThanOrEqual(runs);
      // The run got past the envelope into DATA, and into the refusals.
      expect(stats.accepted).toBeGreaterThan(0);
      for (const code of [354, 500, 501, 550]) expect([code, (stats.codes.get(code) ?? 0) > 0]).toEqual([code, true]);
    },
    Math.max(300_000, runs * 3_000),
  );
});

describe('the relay', () => {
  it('refuses AUTH before STARTTLS (538) and MAIL, RCPT and DATA before AUTH (530), then relays one message out of a smuggling DATA', async () => {
    const result = await runSession(
      target,
      session('relay', [
        'EHLO client.sender.test',
        'AUTH PLAIN {{plain}}',
        'MAIL FROM:<fuzz@{{out}}>',
        'RCPT TO:<{{tag}}-0@{{rcpt}}>',
        'DATA',
        'STARTTLS',
        'EHLO client.sender.test',
        'AUTH PLAIN {{plain-wrong}}',
        'MAIL FROM:<fuzz@{{out}}>',
        'AUTH PLAIN {{plain}}',
        'MAIL FROM:<fuzz@{{out}}>',
        'RCPT TO:<{{tag}}-0@{{rcpt}}>',
        'DATA',
        [
          `From: Fuzz <fuzz@{{out}}>${CRLF}To: {{tag}}-0@{{rcpt}}${CRLF}Subject: {{tag}} one${CRLF}${CRLF}hi\n.\r\n${smuggledMessage(true, CRLF)}\n.\r\nQUIT${CRLF}.${CRLF}`,
        ],
      ]),
    );
    // The store check finds every email whose subject has the tag, the smuggled `{{tag}} smuggled` too, and
    // fails one stored with a bare LF.
    expect(result.problems).toEqual([]);
    expect(codes(result)).toEqual([250, 538, 530, 530, 530, 220, 250, 535, 530, 235, 250, 250, 354, 250, 221]);
  });

  it('refuses MAIL without AUTH on the implicit TLS port, and takes LOGIN there', async () => {
    const result = await runSession(
      target,
      session('relay-tls', [
        'EHLO client.sender.test',
        'MAIL FROM:<fuzz@{{out}}>',
        'AUTH LOGIN',
        '{{login-user}}',
        '{{login-key}}',
        'MAIL FROM:<fuzz@{{out}}>',
      ]),
    );
    expect(result.problems).toEqual([]);
    expect(codes(result)).toEqual([250, 530, 334, 334, 235, 250, 221]);
  });

  // Found by the fuzzer: a client that writes a second whole message before the 354 to its DATA (blind
  // pipelining) gets no reply to anything after it; the MX, whose RCPT hook answers later, does.
  it('answers QUIT after two messages written at once', async () => {
    const message = (n: number) =>
      `MAIL FROM:<fuzz@{{out}}>${CRLF}RCPT TO:<{{tag}}-${n}@{{rcpt}}>${CRLF}DATA${CRLF}` +
      `From: Fuzz <fuzz@{{out}}>${CRLF}Subject: {{tag}} ${n}${CRLF}${CRLF}hi${CRLF}.${CRLF}`;
    const result = await runSession(
      target,
      session('relay-tls', ['EHLO client.sender.test', 'AUTH PLAIN {{plain}}', [message(1) + message(2)]]),
    );
    expect(result.problems).toEqual([]);
    expect(codes(result)).toEqual([250, 235, 250, 250, 354, 250, 250, 250, 354, 250, 221]);
  });

  it(
    `answers ${runs} random sessions with well-formed replies, nothing accepted without AUTH, one email per 250`,
    async () => {
      const stats = newStats();
      await fuzzSmtp({ target, sessions: relaySessions(), runs, lanes: LANES, seed, stats });
      expect(stats.sessions).toBeGreaterThanOrEqual(runs);
      expect(stats.authenticated).toBeGreaterThan(0);
      expect(stats.accepted).toBeGreaterThan(0);
      for (const code of [235, 530, 535, 538]) expect([code, (stats.codes.get(code) ?? 0) > 0]).toEqual([code, true]);
    },
    Math.max(300_000, runs * 3_000),
  );
});

describe('after every session', () => {
  it('the inbound-smtp is still up, and the stores hold exactly the messages answered 250', async () => {
    expect(target.alive()).toBe(true);
    expect((await fetch(`${system.services['inbound-smtp'].url}/healthz`)).status).toBe(200);
    expect(await countOf('select count(*) from inbound_smtp.received_emails where team_id = $1', [teamId])).toBe(
      stores.totals.mx,
    );
    expect(await countOf('select count(*) from sender.emails where team_id = $1', [teamId])).toBe(
      emailsBefore + stores.totals.relay,
    );
  });
});
