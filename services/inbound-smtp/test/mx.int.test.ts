// The inbound MX on real sockets, in this process: smtp-server with our hooks over a real Postgres (its own
// test database, migrated), the outbox written in the same transaction; the outside world faked over real
// sockets: nodemailer and a raw SMTP client as the sending MTAs, a DNS server for their SPF, DKIM and DMARC
// records, and a TCP proxy in front of Postgres to cut it.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { sql, type Kysely } from 'kysely';
import { dkimSign } from 'mailauth';
import nodemailer from 'nodemailer';
import { createDb, createLogger, createMetrics, createWorkerPool, newId, verpAddress } from '@postline/platform';
import {
  createTestDatabase,
  freePort,
  infraFromEnv,
  openRawSmtp,
  rcptReply,
  startDnsServer,
  startTcpProxy,
  waitFor,
  type DnsServer,
  type TcpProxy,
  type TestDatabase,
} from '@postline/testing';
import { SCHEMA } from '../src/config.ts';
import { findDomainsForHost, findLiveDomain } from '../src/db/receiving-domains.ts';
import { migrate } from '../src/db/migrate.ts';
import type { InboundDb } from '../src/db/schema.ts';
import type { ReadReport } from '../src/domain/dmarc-report-reading.ts';
import { createInboundMetrics } from '../src/metrics.ts';
import { createDomainCache } from '../src/smtp/mx-domains.ts';
import { DEFAULT_DMARC_LIMITS } from '../src/domain/dmarc-report-reading.ts';
import { createDmarcReportReader, type DmarcReadJob } from '../src/message-parsing/dmarc-report-reader.ts';
import { createAuthenticator, parseMessage } from '../src/message-parsing/mx-message.ts';
import { createMxServer, type MxLimits } from '../src/smtp/mx-server.ts';
import { selfSignedCertificate } from '../src/tls/tls.ts';
import { applyDomainState } from '../src/use-cases/apply-domain-state.ts';
import { receiveMessage, type ReceiveDeps } from '../src/use-cases/receive-message.ts';

jest.setTimeout(60_000);

const TEAM = '0195f3a2-0000-7000-8000-00000000000a';
const OTHER_TEAM = '0195f3a2-0000-7000-8000-00000000000b';
const DOMAIN = 'in.example.com';
const OTHER_DOMAIN = 'other.example.com';
const PENDING = 'pending.example.com';
const RETURN_PATH = `send.${DOMAIN}`;
const MX_HOST = 'inbound.postline.test';
const VERP_KEY = 'mx-test-verp-key';

let database: TestDatabase;
let admin: Kysely<InboundDb>;
let db: Kysely<InboundDb>;
let pgProxy: TcpProxy;
let dns: DnsServer;
const tls = { ...selfSignedCertificate(MX_HOST, new Date()), selfSigned: true };
const logger = createLogger({ service: 'mx-test', level: 'silent' });
const running: { stop: () => Promise<void> }[] = [];
let port: number;

const dmarcReader = createDmarcReportReader({ limits: DEFAULT_DMARC_LIMITS });

/** An MX like main.ts wires it, on a free port, with these limits (and another DMARC report reader if given). */
async function startMx(
  limits: Partial<MxLimits> = {},
  readDmarcReports: ReceiveDeps['readDmarcReports'] = dmarcReader.read,
): Promise<number> {
  const mxPort = await freePort();
  const receiving = {
    db,
    parse: parseMessage,
    authenticate: createAuthenticator({ servers: [dns.address], timeoutMs: 500, mta: MX_HOST }),
    verpKey: VERP_KEY,
    mxHost: MX_HOST,
    readDmarcReports,
    logger,
  };
  const mx = createMxServer({
    port: mxPort,
    hostName: MX_HOST,
    tls,
    domains: createDomainCache((host) => findDomainsForHost(db, host), { ttlMs: 200 }),
    reportDomain: (domainId) => findLiveDomain(db, domainId),
    receive: (message) => receiveMessage(receiving, message),
    metrics: createInboundMetrics(createMetrics('inbound-smtp').registry),
    logger,
    limits: { closeTimeoutMs: 500, ...limits },
  });
  await mx.start();
  running.push(mx);
  return mxPort;
}

async function setDomain(state: {
  id: string;
  team: string;
  name: string;
  receiving: boolean;
  at?: Date;
  deleted?: boolean;
}): Promise<void> {
  await admin.transaction().execute((trx) =>
    applyDomainState(
      trx,
      {
        domain_id: state.id,
        team_id: state.team,
        name: state.name,
        status: state.receiving ? 'verified' : 'pending',
        capabilities: { sending: 'enabled', receiving: 'enabled' },
        dkim_selector: 'postline-test',
        dkim_private_key_encrypted: 'sealed',
        return_path: `send.${state.name}`,
        sending_verified: true,
        receiving_verified: state.receiving,
        tls: 'opportunistic',
        open_tracking: false,
        click_tracking: false,
        deleted: state.deleted ?? false,
      },
      state.at ?? new Date(),
    ),
  );
}

const DOMAIN_ID = newId();
const PENDING_ID = newId();

beforeAll(async () => {
  database = await createTestDatabase('mx');
  ({ db: admin } = createDb<InboundDb>({ url: database.url, schema: SCHEMA, max: 2 }));
  await migrate(admin);
  pgProxy = await startTcpProxy(
    Number(new URL(infraFromEnv().databaseUrl).port || 5432),
    new URL(infraFromEnv().databaseUrl).hostname,
  );
  ({ db } = createDb<InboundDb>({ url: pgProxy.url(database.url), schema: SCHEMA, max: 4 }));
  dns = await startDnsServer();
  await setDomain({ id: DOMAIN_ID, team: TEAM, name: DOMAIN, receiving: true });
  await setDomain({ id: newId(), team: OTHER_TEAM, name: OTHER_DOMAIN, receiving: true });
  await setDomain({ id: PENDING_ID, team: TEAM, name: PENDING, receiving: false });
  port = await startMx();
});

afterAll(async () => {
  for (const part of running.reverse()) await part.stop();
  await dmarcReader.close();
  await db?.destroy();
  await admin?.destroy();
  await pgProxy?.close();
  await dns?.close();
  await database?.drop();
});

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${counter++}`;

function transport(mxPort = port) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: mxPort,
    secure: false,
    tls: { rejectUnauthorized: false },
    name: 'client.sender.test',
  });
}

type EmailRow = {
  id: string;
  team_id: string;
  subject: string;
  received_for: string[];
  from_address: string;
  spf: string;
  dkim: string;
  dmarc: string;
  raw: Buffer;
  text: string | null;
};

async function emailsWithSubject(subject: string): Promise<EmailRow[]> {
  const { rows } =
    await sql<EmailRow>`select e.*, r.content as raw from received_emails e join received_raw_messages r on r.id = e.raw_id
    where e.subject = ${subject} order by e.team_id`.execute(admin);
  return rows;
}

async function outboxOf(
  emailId: string,
): Promise<{ routing_key: string; envelope: { team_id: string; data: Record<string, unknown> } }[]> {
  const { rows } = await sql<{ routing_key: string; envelope: { team_id: string; data: Record<string, unknown> } }>`
    select routing_key, envelope from outbox where envelope->'data'->>'email_id' = ${emailId}`.execute(admin);
  return rows;
}

/** Sends `data` (bytes as they are, ending with the client's own end of data) in one raw transaction. */
async function rawTransaction(mxPort: number, rcpt: string[], data: string | Buffer, mailFrom = 'sender@sender.test') {
  const smtp = await openRawSmtp(mxPort);
  try {
    await smtp.command('EHLO client.sender.test');
    expect((await smtp.command(`MAIL FROM:<${mailFrom}>`)).code).toBe(250);
    for (const address of rcpt) expect((await smtp.command(`RCPT TO:<${address}>`)).code).toBe(250);
    expect((await smtp.command('DATA')).code).toBe(354);
    smtp.write(data);
    const reply = await smtp.read();
    const after = await smtp.command('NOOP');
    return { reply, after };
  } finally {
    smtp.close();
  }
}

describe('RCPT', () => {
  it('takes mail for a verified receiving domain and stores it with its event, answering 250 after the commit', async () => {
    const subject = unique('hello');
    const info = await transport().sendMail({
      envelope: { from: 'alice@sender.test', to: [`support@${DOMAIN}`, `sales@${DOMAIN}`] },
      from: 'Alice <alice@sender.test>',
      to: `support@${DOMAIN}`,
      cc: `sales@${DOMAIN}`,
      subject,
      text: 'Hi there',
      html: '<p>Hi <b>there</b></p>',
    });
    const [email] = await emailsWithSubject(subject);
    expect(info.response).toBe(`250 2.0.0 Ok: queued as ${email!.id}`);
    expect(email).toMatchObject({
      team_id: TEAM,
      received_for: [`support@${DOMAIN}`, `sales@${DOMAIN}`],
      from_address: 'alice@sender.test',
      text: 'Hi there',
    });
    const [event] = await outboxOf(email!.id);
    expect(event).toMatchObject({ routing_key: 'email.received', envelope: { team_id: TEAM } });
    expect(event!.envelope.data).toEqual({
      email_id: email!.id,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      from: 'alice@sender.test',
      to: [`support@${DOMAIN}`],
      cc: [`sales@${DOMAIN}`],
      bcc: [],
      received_for: [`support@${DOMAIN}`, `sales@${DOMAIN}`],
      message_id: info.messageId,
      subject,
      attachments: [],
    });
  });

  it('makes one received email per team among the recipients, each with its own recipients, sharing one raw message', async () => {
    const subject = unique('two-teams');
    await transport().sendMail({
      from: 'bob@sender.test',
      to: [`a@${DOMAIN}`, `b@${OTHER_DOMAIN}`, `c@${DOMAIN}`],
      subject,
      text: 'x',
    });
    const emails = await emailsWithSubject(subject);
    expect(emails.map((e) => [e.team_id, e.received_for])).toEqual([
      [TEAM, [`a@${DOMAIN}`, `c@${DOMAIN}`]],
      [OTHER_TEAM, [`b@${OTHER_DOMAIN}`]],
    ]);
    const { rows } = await sql<{
      raws: string;
    }>`select count(distinct raw_id) as raws from received_emails where subject = ${subject}`.execute(admin);
    expect(Number(rows[0]!.raws)).toBe(1);
  });

  it('refuses a domain that is not ours, and one whose receiving is not verified, with 550 5.7.1 (relaying denied, never 5.1.x) and the reason', async () => {
    expect(await rcptReply(port, 'someone@nowhere.test')).toEqual({
      code: 550,
      text: `5.7.1 <someone@nowhere.test>: ${MX_HOST} does not accept mail for nowhere.test`,
    });
    expect(await rcptReply(port, `someone@${PENDING}`)).toEqual({
      code: 550,
      text: `5.7.1 <someone@${PENDING}>: ${MX_HOST} does not accept mail for ${PENDING} (receiving is not enabled and verified for this domain)`,
    });
    // Never a relay: any other domain is refused the same way.
    expect((await rcptReply(port, 'victim@gmail.com')).code).toBe(550);
  });

  it('sees a domain verified, then unverified, within seconds', async () => {
    const name = `${unique('flip')}.example.com`;
    const id = newId();
    await setDomain({ id, team: TEAM, name, receiving: false });
    expect((await rcptReply(port, `x@${name}`)).code).toBe(550);
    await setDomain({ id, team: TEAM, name, receiving: true });
    await waitFor(
      'the MX to take mail for the verified domain',
      async () => (await rcptReply(port, `x@${name}`)).code === 250,
      5000,
    );
    await setDomain({ id, team: TEAM, name, receiving: false });
    await waitFor(
      'the MX to refuse the domain again',
      async () => (await rcptReply(port, `x@${name}`)).code === 550,
      5000,
    );
  });

  it('keeps the newest domain state: an older one arriving late changes nothing, and a deleted domain takes no mail', async () => {
    const name = `${unique('late')}.example.com`;
    const id = newId();
    const at = Date.now();
    await setDomain({ id, team: TEAM, name, receiving: true, at: new Date(at) });
    await setDomain({ id, team: TEAM, name, receiving: false, at: new Date(at - 60_000) });
    await waitFor(
      'the MX to take mail for the domain',
      async () => (await rcptReply(port, `x@${name}`)).code === 250,
      5000,
    );
    await setDomain({ id, team: TEAM, name, receiving: true, at: new Date(at + 1000), deleted: true });
    await waitFor(
      'the MX to refuse the deleted domain',
      async () => (await rcptReply(port, `x@${name}`)).code === 550,
      5000,
    );
    expect((await rcptReply(port, `x@${name}`)).text).toBe(
      `5.7.1 <x@${name}>: ${MX_HOST} does not accept mail for ${name}`,
    );
  });

  it('takes return-path mail only for VERP and unsubscribe mailboxes, with the null reverse-path of a DSN', async () => {
    const verp = verpAddress({ emailId: newId(), recipient: 0, returnPath: RETURN_PATH, key: VERP_KEY });
    const smtp = await openRawSmtp(port);
    try {
      await smtp.command('EHLO mta.remote.test');
      expect((await smtp.command('MAIL FROM:<>')).code).toBe(250);
      expect(await smtp.command(`RCPT TO:<info@${RETURN_PATH}>`)).toEqual({
        code: 550,
        text: `5.1.1 <info@${RETURN_PATH}>: ${MX_HOST} does not accept mail for ${RETURN_PATH} (no such mailbox at this return-path domain)`,
      });
      expect((await smtp.command(`RCPT TO:<${verp}>`)).code).toBe(250);
      expect((await smtp.command(`RCPT TO:<unsubscribe@${RETURN_PATH}>`)).code).toBe(250);
      expect((await smtp.command('DATA')).code).toBe(354);
      smtp.write('From: MAILER-DAEMON@remote.test\r\nSubject: Undelivered Mail\r\n\r\nA bounce.\r\n.\r\n');
      expect((await smtp.read()).code).toBe(250);
    } finally {
      smtp.close();
    }
    // Return-path mail is not a customer's received email.
    expect(await emailsWithSubject('Undelivered Mail')).toEqual([]);
  });

  it('answers the 51st recipient of a transaction with 452 4.5.3', async () => {
    const smtp = await openRawSmtp(port);
    try {
      await smtp.command('EHLO client.sender.test');
      await smtp.command('MAIL FROM:<bulk@sender.test>');
      for (let i = 0; i < 50; i++) expect((await smtp.command(`RCPT TO:<r${i}@${DOMAIN}>`)).code).toBe(250);
      expect(await smtp.command(`RCPT TO:<r50@${DOMAIN}>`)).toEqual({
        code: 452,
        text: '4.5.3 Error: too many recipients',
      });
    } finally {
      smtp.close();
    }
  });

  it('takes SMTPUTF8 addresses and 8-bit headers', async () => {
    const subject = unique('utf8');
    const local = `josé.用户`;
    const smtp = await openRawSmtp(port);
    try {
      const ehlo = await smtp.command('EHLO client.sender.test');
      expect(ehlo.text).toContain('SMTPUTF8');
      expect(ehlo.text).toContain('8BITMIME');
      expect((await smtp.command('MAIL FROM:<renée@sender.test> SMTPUTF8 BODY=8BITMIME')).code).toBe(250);
      expect((await smtp.command(`RCPT TO:<${local}@${DOMAIN}>`)).code).toBe(250);
      await smtp.command('DATA');
      smtp.write(
        Buffer.from(
          `From: Renée <renée@sender.test>\r\nTo: ${local}@${DOMAIN}\r\nSubject: ${subject} ✓\r\n\r\nÇa va?\r\n.\r\n`,
        ),
      );
      expect((await smtp.read()).code).toBe(250);
    } finally {
      smtp.close();
    }
    const [email] = await emailsWithSubject(`${subject} ✓`);
    expect(email).toMatchObject({
      received_for: [`${local}@${DOMAIN}`],
      from_address: 'renée@sender.test',
      text: 'Ça va?\n',
    });
  });
});

describe('DATA', () => {
  it('announces SIZE 40 MB, refuses a declared size past it, and answers 552 5.3.4 to a message past it, storing nothing', async () => {
    const smtp = await openRawSmtp(port);
    try {
      expect((await smtp.command('EHLO client.sender.test')).text).toContain('SIZE 41943040');
      expect((await smtp.command('MAIL FROM:<big@sender.test> SIZE=41943041')).code).toBe(552);
    } finally {
      smtp.close();
    }
    const subject = unique('too-big');
    const line = `${'x'.repeat(998)}\r\n`;
    const body = line.repeat(Math.ceil((40 * 1024 * 1024 + 1) / line.length));
    const { reply, after } = await rawTransaction(port, [`big@${DOMAIN}`], `Subject: ${subject}\r\n\r\n${body}.\r\n`);
    expect(reply).toEqual({ code: 552, text: '5.3.4 Error: message exceeds fixed maximum message size 41943040' });
    expect(after.code).toBe(250);
    expect(await emailsWithSubject(subject)).toEqual([]);
  });

  it('never lets <LF>.<LF>, <LF>.<CR><LF> or <CR>.<CR> end a message: one message, stored with CRLF only', async () => {
    for (const [name, end] of [
      ['lf-dot-lf', '\n.\n'],
      ['lf-dot-crlf', '\n.\r\n'],
      ['crlf-dot-lf', '\r\n.\n'],
      ['cr-dot-cr', '\r.\r'],
    ] as const) {
      const subject = unique(`smuggle-${name}`);
      const smuggled = `MAIL FROM:<ceo@victim.test>\r\nRCPT TO:<smuggled@${DOMAIN}>\r\nDATA\r\nSubject: ${subject}-second\r\n\r\nspoofed\r\n`;
      const { reply, after } = await rawTransaction(
        port,
        [`target@${DOMAIN}`],
        `Subject: ${subject}\r\n\r\nhello${end}${smuggled}.\r\n`,
      );
      expect(reply.code).toBe(250);
      // The connection is back in command mode, with nothing pending.
      expect(after.code).toBe(250);
      const emails = await emailsWithSubject(subject);
      expect(emails).toHaveLength(1);
      expect(await emailsWithSubject(`${subject}-second`)).toEqual([]);
      const raw = emails[0]!.raw.toString('latin1');
      expect(raw).toContain('MAIL FROM:<ceo@victim.test>');
      expect(raw.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    }
  });

  it('stores a message with bare LF line ends as CRLF, and parses it', async () => {
    const subject = unique('bare-lf');
    const { reply } = await rawTransaction(
      port,
      [`lf@${DOMAIN}`],
      `From: lf@sender.test\nTo: lf@${DOMAIN}\nSubject: ${subject}\n\nline one\nline two\r\n.\r\n`,
    );
    expect(reply.code).toBe(250);
    const [email] = await emailsWithSubject(subject);
    expect(email!.raw.toString()).toBe(
      `From: lf@sender.test\r\nTo: lf@${DOMAIN}\r\nSubject: ${subject}\r\n\r\nline one\r\nline two\r\n`,
    );
    expect(email).toMatchObject({ from_address: 'lf@sender.test', text: 'line one\nline two\n' });
  });

  it('stores a message it cannot make sense of raw, with best-effort fields', async () => {
    const marker = unique('garbage');
    const garbage = Buffer.concat([
      Buffer.from(`\x00\x01${marker}\xff\xfe no headers at all`, 'latin1'),
      Buffer.from('\r\n.\r\n'),
    ]);
    const before = await sql<{ n: string }>`select count(*) as n from received_emails`.execute(admin);
    const { reply } = await rawTransaction(port, [`junk@${DOMAIN}`], garbage);
    expect(reply.code).toBe(250);
    const id = /queued as (\S+)/.exec(reply.text)?.[1] ?? '';
    const { rows } = await sql<{
      subject: string;
      from_address: string;
      raw: Buffer;
      message_id: string;
    }>`select e.subject, e.from_address,
      e.message_id, r.content as raw from received_emails e join received_raw_messages r on r.id = e.raw_id where e.id = ${id}`.execute(
      admin,
    );
    expect(rows[0]).toMatchObject({ subject: '', from_address: '', message_id: `<${id}@${MX_HOST}>` });
    expect(rows[0]!.raw.toString('latin1')).toContain(marker);
    const after = await sql<{ n: string }>`select count(*) as n from received_emails`.execute(admin);
    expect(Number(after.rows[0]!.n)).toBe(Number(before.rows[0]!.n) + 1);
  });

  it('stores a message with NUL characters in its headers, text and attachment names (Postgres text refuses them)', async () => {
    const subject = unique('nul');
    const message = [
      `Subject: ${subject}\0`,
      'X-Odd: a\0b',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'te\0xt',
      '--b',
      'Content-Type: application/octet-stream; name="a\0.bin"',
      'Content-Disposition: attachment; filename="a\0.bin"',
      '',
      'data',
      '--b--',
      '',
    ].join('\r\n');
    const { reply } = await rawTransaction(port, [`nul@${DOMAIN}`], `${message}.\r\n`);
    expect(reply.code).toBe(250);
    const [email] = await emailsWithSubject(subject);
    expect(email).toMatchObject({ text: 'text', headers: expect.objectContaining({ 'x-odd': 'ab' }) });
    expect(email!.raw.includes(Buffer.from('te\0xt'))).toBe(true);
    const { rows } = await sql<{
      filename: string;
    }>`select filename from received_attachments where email_id = ${email!.id}`.execute(admin);
    expect(rows).toEqual([{ filename: 'a.bin' }]);
  });

  it('answers 451 4.3.0 while Postgres is unreachable (never 250, the service keeps running), and takes the message once it is back', async () => {
    const subject = unique('outage');
    const smtp = await openRawSmtp(port);
    try {
      await smtp.command('EHLO client.sender.test');
      await smtp.command('MAIL FROM:<retry@sender.test>');
      expect((await smtp.command(`RCPT TO:<outage@${DOMAIN}>`)).code).toBe(250);
      await pgProxy.cut('refuse');
      await smtp.command('DATA');
      smtp.write(`Subject: ${subject}\r\n\r\nkept by the sender until we can store it\r\n.\r\n`);
      expect(await smtp.read()).toEqual({
        code: 451,
        text: '4.3.0 Temporary failure storing the message, try again later',
      });
    } finally {
      smtp.close();
      await pgProxy.restore();
    }
    expect(await emailsWithSubject(subject)).toEqual([]);
    await waitFor('the retry to be taken', async () => {
      const sent = await transport()
        .sendMail({ from: 'retry@sender.test', to: `outage@${DOMAIN}`, subject, text: 'again' })
        .then(
          () => true,
          () => false,
        );
      return sent;
    });
    expect(await emailsWithSubject(subject)).toHaveLength(1);
  });
});

describe('DMARC reports', () => {
  it('answers other sessions while a report is read on its thread, and stores the report after', async () => {
    // A reading thread held until this test lets go, as a large report holds it for seconds.
    const latch = new SharedArrayBuffer(4);
    const flag = new Int32Array(latch);
    const held = createWorkerPool<DmarcReadJob & { latch: SharedArrayBuffer }, ReadReport[]>({
      name: 'held-dmarc',
      url: new URL('./fixtures/held-dmarc-worker.ts', import.meta.url),
      threads: 1,
    });
    running.push({ stop: () => held.close() });
    const mxPort = await startMx({}, (attachments) => held.run({ attachments, limits: DEFAULT_DMARC_LIMITS, latch }));
    const reportId = unique('report');
    const xml = readFileSync(new URL('./fixtures/dmarc/mailru.xml', import.meta.url), 'utf8')
      .replaceAll('dmarc-test.example.com', DOMAIN)
      .replace(/<report_id>[^<]+</, `<report_id>${reportId}<`);
    const reportAddress = `dmarc+${DOMAIN_ID.replaceAll('-', '')}@${MX_HOST}`;
    let reportReply: string | undefined;
    const report = transport(mxPort)
      .sendMail({
        envelope: { from: 'dmarc@reporter.test', to: [reportAddress] },
        from: 'dmarc@reporter.test',
        to: reportAddress,
        subject: `Report Domain: ${DOMAIN}`,
        text: 'An aggregate report.',
        attachments: [{ filename: 'report.xml', content: xml, contentType: 'text/xml' }],
      })
      .then((info) => (reportReply = info.response));
    await waitFor('the report being read', () => Atomics.load(flag, 0) === 1);

    // Meanwhile another client's whole transaction is answered, its mail stored.
    const subject = unique('meanwhile');
    const other = await transport(mxPort).sendMail({
      envelope: { from: 'alice@sender.test', to: [`support@${DOMAIN}`] },
      from: 'alice@sender.test',
      to: `support@${DOMAIN}`,
      subject,
      text: 'Hi',
    });
    expect(other.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
    expect(await emailsWithSubject(subject)).toHaveLength(1);
    expect(reportReply).toBeUndefined();

    Atomics.store(flag, 0, 2);
    Atomics.notify(flag, 0);
    await report;
    expect(reportReply).toMatch(/^250 2\.0\.0 Ok: queued$/);
    const stored = await admin
      .selectFrom('dmarc_reports')
      .select(['domain_id', 'org_name', 'message_count'])
      .where('report_id', '=', reportId)
      .execute();
    expect(stored).toEqual([{ domain_id: DOMAIN_ID, org_name: 'Mail.Ru', message_count: '2' }]);
  });
});

describe('sessions', () => {
  it('refuses a session past the per-address cap with 421 4.7.0 at connect, and takes one again once a session ends', async () => {
    const capped = await startMx({ maxSessionsPerIp: 2 });
    const first = await openRawSmtp(capped);
    const second = await openRawSmtp(capped);
    const third = await openRawSmtp(capped);
    expect(first.greeting.code).toBe(220);
    expect(second.greeting.code).toBe(220);
    expect(third.greeting).toEqual({
      code: 421,
      text: '4.7.0 Too many connections from 127.0.0.1 (at most 2 at once), try again later',
    });
    await third.closed;
    expect((await first.command('QUIT')).code).toBe(221);
    await first.closed;
    await waitFor('a session to be taken again', async () => {
      const next = await openRawSmtp(capped);
      next.close();
      return next.greeting.code === 220;
    });
    second.close();
  });

  it('closes an idle session, and a busy one at the whole-session limit', async () => {
    const strict = await startMx({ idleTimeoutMs: 300, sessionTimeoutMs: 1500 });
    const idle = await openRawSmtp(strict);
    await idle.command('EHLO idle.test');
    expect((await idle.read()).code).toBe(421);
    await idle.closed;

    const busy = await openRawSmtp(strict);
    const started = Date.now();
    let last = await busy.command('EHLO busy.test');
    // A NOOP every 100 ms keeps it from ever being idle.
    while (last.code === 250 && Date.now() - started < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await busy.command('NOOP');
    }
    expect(last).toEqual({ code: 421, text: '4.4.2 Session time limit reached, closing connection' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    await busy.closed;
  });
});

describe('authentication', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKeyBase64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

  beforeAll(() => {
    dns.set('signed.test', [{ type: 'TXT', value: 'v=spf1 ip4:127.0.0.1 -all' }]);
    dns.set('sel._domainkey.signed.test', [{ type: 'TXT', value: `v=DKIM1; k=rsa; p=${publicKeyBase64}` }]);
    dns.set('_dmarc.signed.test', [{ type: 'TXT', value: 'v=DMARC1; p=reject' }]);
    dns.set('elsewhere.test', [{ type: 'TXT', value: 'v=spf1 ip4:192.0.2.1 -all' }]);
    dns.set('_dmarc.elsewhere.test', [{ type: 'TXT', value: 'v=DMARC1; p=reject' }]);
    dns.set('soft.test', [{ type: 'TXT', value: 'v=spf1 ip4:192.0.2.1 ~all' }]);
    dns.fail('broken.test', 'servfail');
    dns.fail('_dmarc.broken.test', 'servfail');
  });

  async function signed(from: string, subject: string, body: string): Promise<string> {
    const message = `From: ${from}\r\nTo: auth@${DOMAIN}\r\nSubject: ${subject}\r\nMessage-ID: <${newId()}@signed.test>\r\n\r\n${body}\r\n`;
    // mailauth's declarations put the key at the top level; its signer reads it from signatureData.
    const options = {
      canonicalization: 'relaxed/relaxed',
      signatureData: [
        {
          signingDomain: 'signed.test',
          selector: 'sel',
          privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        },
      ],
    };
    const { signatures } = await dkimSign(message, options as unknown as Parameters<typeof dkimSign>[1]);
    return signatures + message;
  }

  async function verdicts(mailFrom: string, message: string, subject: string) {
    const { reply } = await rawTransaction(port, [`auth@${DOMAIN}`], `${message}.\r\n`, mailFrom);
    expect(reply.code).toBe(250);
    const [email] = await emailsWithSubject(subject);
    return { spf: email!.spf, dkim: email!.dkim, dmarc: email!.dmarc };
  }

  it('passes SPF, DKIM and DMARC for a signed message from an authorised address', async () => {
    const subject = unique('auth-pass');
    expect(await verdicts('alice@signed.test', await signed('alice@signed.test', subject, 'genuine'), subject)).toEqual(
      {
        spf: 'pass',
        dkim: 'pass',
        dmarc: 'pass',
      },
    );
  });

  it('fails DKIM for an altered body, SPF for an address the domain does not authorise, and DMARC with them', async () => {
    const subject = unique('auth-fail');
    const altered = (await signed('ceo@signed.test', subject, 'pay 10 EUR')).replace('pay 10 EUR', 'pay 10000 EUR');
    expect(await verdicts('ceo@elsewhere.test', altered, subject)).toEqual({
      spf: 'fail',
      dkim: 'fail',
      dmarc: 'fail',
    });
  });

  it('asks DNS once for a burst of mail from one sender, and again when a record failed to resolve', async () => {
    dns.set('burst.test', [{ type: 'TXT', value: 'v=spf1 ip4:127.0.0.1 -all' }]);
    for (let i = 0; i < 3; i++) {
      const subject = unique('burst');
      expect(
        (await verdicts('x@burst.test', `From: x@burst.test\r\nSubject: ${subject}\r\n\r\nhi\r\n`, subject)).spf,
      ).toBe('pass');
    }
    const asked = (name: string) => dns.queries.filter((q) => q.name === name && q.type === 'TXT').length;
    expect(asked('burst.test')).toBe(1);
    expect(asked('_dmarc.burst.test')).toBe(1);
    // A SERVFAIL is not remembered: each message asks again.
    const before = asked('broken.test');
    const subject = unique('burst-broken');
    await verdicts('x@broken.test', `From: x@broken.test\r\nSubject: ${subject}\r\n\r\nhi\r\n`, subject);
    await verdicts('x@broken.test', `From: x@broken.test\r\nSubject: ${subject}-2\r\n\r\nhi\r\n`, `${subject}-2`);
    expect(asked('broken.test')).toBeGreaterThanOrEqual(before + 2);
  });

  it('gives gray for a softfail, unknown without records or signature, processing_failed when DNS fails', async () => {
    const soft = unique('auth-soft');
    expect((await verdicts('x@soft.test', `From: x@soft.test\r\nSubject: ${soft}\r\n\r\nhi\r\n`, soft)).spf).toBe(
      'gray',
    );
    const none = unique('auth-none');
    expect(
      await verdicts('x@unknown-domain.test', `From: x@unknown-domain.test\r\nSubject: ${none}\r\n\r\nhi\r\n`, none),
    ).toEqual({
      spf: 'unknown',
      dkim: 'unknown',
      dmarc: 'unknown',
    });
    const broken = unique('auth-broken');
    const failed = await verdicts('x@broken.test', `From: x@broken.test\r\nSubject: ${broken}\r\n\r\nhi\r\n`, broken);
    expect(failed.spf).toBe('processing_failed');
    expect(failed.dmarc).toBe('processing_failed');
  });
});
