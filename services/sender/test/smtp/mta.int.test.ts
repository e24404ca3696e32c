import { generateKeyPairSync } from 'node:crypto';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import {
  freePort,
  startDnsServer,
  startSinkMx,
  uniqueName,
  waitFor,
  type DnsServer,
  type SinkMx,
  type SinkMxOptions,
} from '@postline/testing';
import { createDkimSigner } from '../../src/delivery/mime/dkim.ts';
import { createMta, type MtaOptions } from '../../src/delivery/smtp/mta.ts';
import { createMxResolver, type MxResolver } from '../../src/delivery/smtp/mx.ts';
import type { SmtpTrace } from '../../src/delivery/smtp/transcript.ts';
import type { DeliveryRequest, Mta } from '../../src/delivery/smtp/types.ts';

// Every sink listens on the same port (the MTA's MX_DELIVERY_PORT) on its own loopback address.
let port: number;
let dns: DnsServer;
let resolver: MxResolver;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  port = await freePort();
  dns = await startDnsServer();
  resolver = createMxResolver({ servers: [dns.address], timeoutMs: 300, tries: 1, allowPrivate: true, cacheMs: 0 });
});

afterEach(async () => {
  // MTAs first (they hold sessions open), then sinks.
  for (const close of cleanup.splice(0).reverse()) await close();
});

afterAll(async () => {
  await dns.close();
});

let nextHost = 2;
async function sink(options: SinkMxOptions = {}): Promise<SinkMx> {
  const started = await startSinkMx({ host: `127.0.0.${nextHost++}`, port, ...options });
  cleanup.unshift(() => started.close());
  return started;
}

function mta(options: Partial<MtaOptions> = {}): Mta {
  const created = createMta({
    resolver,
    port,
    heloName: 'mta.postline.test',
    allowPrivate: true,
    connectTimeoutMs: 2000,
    greetingTimeoutMs: 2000,
    socketTimeoutMs: 3000,
    ...options,
  });
  cleanup.push(() => created.close());
  return created;
}

/** A fresh recipient domain whose MX hosts point at the given addresses, preference 10, 20, ... */
function domainWithMx(...addresses: string[]): string {
  const domain = `${uniqueName('rcpt').toLowerCase().replace(/_/g, '-')}.test`;
  dns.set(
    domain,
    addresses.map((_, i) => ({ type: 'MX' as const, exchange: `mx${i + 1}.${domain}`, priority: 10 * (i + 1) })),
  );
  addresses.forEach((address, i) => dns.set(`mx${i + 1}.${domain}`, [{ type: 'A', address }]));
  return domain;
}

const raw = Buffer.from(
  'From: a@sender.test\r\nTo: x@rcpt.test\r\nSubject: hi\r\nMessage-ID: <1@sender.test>\r\n\r\nhello\r\n',
);

function request(domain: string, locals: string[], extra: Partial<DeliveryRequest> = {}): DeliveryRequest {
  return {
    domain,
    envelopeFrom: 'b.0.x.aaaaaaaaaa@send.sender.test',
    recipients: locals.map((l) => `${l}@${domain}`),
    raw,
    requireTls: false,
    ...extra,
  };
}

/** An address on the loopback network with nothing listening on the port: a down MX. */
const DOWN = '127.0.1.1';

describe('MTA delivery', () => {
  it('delivers a DKIM-signed message that still verifies at the MX', async () => {
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const txt = `v=DKIM1; k=rsa; p=${keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
    const signed = await createDkimSigner()(
      Buffer.from(
        'From: a@sender.test\nTo: ok@rcpt.test\nSubject: signed\nDate: Sat, 21 Nov 2026 09:00:00 +0000\n\nbody\n.leading dot\n',
      ),
      {
        domain: 'sender.test',
        selector: 's1',
        privateKeyPem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      },
    );
    const mx = await sink();
    const domain = domainWithMx(mx.host);

    const outcomes = await mta().deliver({ ...request(domain, ['ok']), raw: signed });

    expect(outcomes).toEqual([
      {
        status: 'delivered',
        recipient: `ok@${domain}`,
        code: 250,
        response: expect.stringMatching(/^250 /),
        mx: `mx1.${domain}`,
      },
    ]);
    const [message] = await mx.waitForMessages(1);
    expect(message!.from).toBe('b.0.x.aaaaaaaaaa@send.sender.test');
    expect(message!.to).toEqual([`ok@${domain}`]);
    const verified = await dkimVerify(message!.raw, {
      resolver: (name: string) =>
        name === 's1._domainkey.sender.test'
          ? Promise.resolve([[txt]])
          : Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' })),
    });
    expect(verified.results.map((r) => r.status.result)).toEqual(['pass']);
  });

  it('delivers a 250, defers a 452 and bounces a 550 in one transaction, in input order', async () => {
    const mx = await sink();
    const domain = domainWithMx(mx.host);

    const outcomes = await mta().deliver(request(domain, ['soft', 'ok', 'hard', 'full']));

    expect(outcomes).toEqual([
      {
        status: 'deferred',
        recipient: `soft@${domain}`,
        code: 452,
        enhanced: '4.2.2',
        response: expect.stringContaining('452 4.2.2'),
        mx: `mx1.${domain}`,
      },
      { status: 'delivered', recipient: `ok@${domain}`, code: 250, response: expect.any(String), mx: `mx1.${domain}` },
      {
        status: 'bounced',
        recipient: `hard@${domain}`,
        code: 550,
        enhanced: '5.1.1',
        response: expect.stringContaining('550 5.1.1'),
        mx: `mx1.${domain}`,
        bounce: { type: 'Permanent', subType: 'General', suppress: true },
      },
      {
        status: 'bounced',
        recipient: `full@${domain}`,
        code: 552,
        enhanced: '5.2.2',
        response: expect.any(String),
        mx: `mx1.${domain}`,
        bounce: { type: 'Transient', subType: 'MailboxFull', suppress: false },
      },
    ]);
    await mx.waitForMessages(1);
    expect(mx.messages.map((m) => m.to)).toEqual([[`ok@${domain}`]]);
  });

  it('keeps a reply holding NUL characters storable (U+FFFD), since Postgres text cannot hold them', async () => {
    // smtp-server never sends a NUL, so this MX is a bare socket speaking just enough SMTP.
    const host = `127.0.0.${nextHost++}`;
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.write('220 raw.test ESMTP\r\n');
      let pending = '';
      socket.on('data', (chunk: Buffer) => {
        pending += chunk.toString('latin1');
        for (let end = pending.indexOf('\r\n'); end >= 0; end = pending.indexOf('\r\n')) {
          const line = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (/^(EHLO|HELO)/i.test(line)) socket.write('250-raw.test\r\n250 PIPELINING\r\n');
          else if (/^MAIL/i.test(line)) socket.write('250 2.1.0 ok\r\n');
          else if (/^RCPT/i.test(line)) socket.write('550 5.1.1 no\u0000such user\r\n');
          else if (/^QUIT/i.test(line)) socket.end('221 2.0.0 bye\r\n');
          else socket.write('250 2.0.0 ok\r\n');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    cleanup.unshift(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const domain = domainWithMx(host);
    const [outcome] = await mta().deliver(request(domain, ['odd']));
    expect(outcome).toMatchObject({ status: 'bounced', code: 550, enhanced: '5.1.1' });
    expect(outcome?.response).toContain('no\uFFFDsuch user');
    expect(outcome?.response).not.toContain('\u0000');
  });

  it('defers with 451 4.4.5 a delivery that waited too long for a session to a busy MX, leaving the slot to others', async () => {
    // Tarpits: they accept connections and never greet, so each session holds its slot until the greeting
    // times out. The MX host has two such addresses.
    const sockets = new Set<net.Socket>();
    const tarpit = async () => {
      const host = `127.0.0.${nextHost++}`;
      const server = net.createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => server.listen(port, host, resolve));
      cleanup.unshift(
        () =>
          new Promise<void>((resolve) => {
            for (const s of sockets) s.destroy();
            server.close(() => resolve());
          }),
      );
      return host;
    };
    const [first, second] = [await tarpit(), await tarpit()];
    const domain = domainWithMx(first);
    dns.set(
      `mx1.${domain}`,
      [first, second].map((address) => ({ type: 'A' as const, address })),
    );
    const busy = mta({ maxConnectionsPerDestination: 1, slotWaitMs: 200, greetingTimeoutMs: 1500 });

    const [holding, waiting] = await Promise.all([
      busy.deliver(request(domain, ['first'])),
      busy.deliver(request(domain, ['second'])),
    ]);

    // Deferred where it waited, not tried at the next address (a wait at each would add up).
    expect(waiting).toEqual([
      {
        status: 'deferred',
        recipient: `second@${domain}`,
        code: 451,
        enhanced: '4.4.5',
        response: expect.stringContaining('451 4.4.5 The MX host is busy'),
        mx: null,
      },
    ]);
    expect(holding[0]).toMatchObject({ status: 'deferred', code: 451, enhanced: '4.4.1' });
    // The first delivery's sessions, one at each address; none of the second's.
    expect(sockets.size).toBe(2);
  });

  it('reports every recipient when the server refuses them all', async () => {
    const mx = await sink();
    const domain = domainWithMx(mx.host);

    const outcomes = await mta().deliver(request(domain, ['hard1', 'soft1']));

    expect(outcomes.map((o) => [o.status, o.code])).toEqual([
      ['bounced', 550],
      ['deferred', 452],
    ]);
    expect(mx.messages).toHaveLength(0);
  });

  it('bounces a null MX domain with 556 5.1.10 without an address lookup or a connection', async () => {
    const mx = await sink();
    const domain = `${uniqueName('nullmx').toLowerCase().replace(/_/g, '-')}.test`;
    dns.set(domain, [{ type: 'MX', exchange: '.', priority: 0 }]);
    const before = dns.queries.length;

    const [outcome] = await mta().deliver(request(domain, ['ok']));

    expect(outcome).toMatchObject({
      status: 'bounced',
      code: 556,
      enhanced: '5.1.10',
      mx: null,
      bounce: { type: 'Permanent', subType: 'NoEmail', suppress: true },
    });
    expect(dns.queries.slice(before).filter((q) => q.type === 'A' || q.type === 'AAAA')).toEqual([]);
    expect(mx.connections()).toBe(0);
  });

  it('bounces a domain that does not exist and suppresses the recipient', async () => {
    const [outcome] = await mta().deliver(request(`${uniqueName('nx').toLowerCase().replace(/_/g, '-')}.test`, ['ok']));
    expect(outcome).toMatchObject({
      status: 'bounced',
      code: 550,
      enhanced: '5.1.2',
      bounce: { type: 'Permanent', subType: 'NoEmail', suppress: true },
    });
  });

  it.each(['servfail', 'timeout'] as const)('defers every recipient on a DNS %s', async (how) => {
    const mx = await sink();
    const domain = domainWithMx(mx.host);
    dns.fail(domain, how);

    const outcomes = await mta().deliver(request(domain, ['ok', 'other']));

    expect(outcomes.map((o) => [o.status, o.code, o.status === 'delivered' ? null : o.enhanced])).toEqual([
      ['deferred', 451, '4.4.3'],
      ['deferred', 451, '4.4.3'],
    ]);
    expect(mx.connections()).toBe(0);
  });

  it('delivers to the domain itself when it has no MX records (implicit MX)', async () => {
    const mx = await sink();
    const domain = `${uniqueName('implicit').toLowerCase().replace(/_/g, '-')}.test`;
    dns.set(domain, [{ type: 'A', address: mx.host }]);

    const [outcome] = await mta().deliver(request(domain, ['ok']));

    expect(outcome).toMatchObject({ status: 'delivered', mx: domain });
    expect(mx.messages).toHaveLength(1);
  });

  it('falls back to the second MX when the first is down', async () => {
    const second = await sink();
    const domain = domainWithMx(DOWN, second.host);

    const [outcome] = await mta().deliver(request(domain, ['ok']));

    expect(outcome).toMatchObject({ status: 'delivered', mx: `mx2.${domain}` });
    expect(second.messages).toHaveLength(1);
  });

  it('moves on to the second MX when the first answers 421', async () => {
    const first = await sink({ greeting: 421 });
    const second = await sink();
    const domain = domainWithMx(first.host, second.host);

    const [outcome] = await mta().deliver(request(domain, ['ok']));

    expect(outcome).toMatchObject({ status: 'delivered', mx: `mx2.${domain}` });
    expect(first.connections()).toBe(1);
    expect(first.messages).toHaveLength(0);
    expect(second.messages).toHaveLength(1);
  });

  it('defers with the last reply when every MX refuses', async () => {
    const first = await sink({ greeting: 421 });
    const domain = domainWithMx(DOWN, first.host);

    const [outcome] = await mta().deliver(request(domain, ['ok']));

    expect(outcome).toMatchObject({ status: 'deferred', code: 421, mx: `mx2.${domain}` });
  });

  it('still tries the backup MX when the primary has more addresses than a delivery tries', async () => {
    const backup = await sink();
    const domain = domainWithMx(DOWN, backup.host);
    // The primary host has six addresses, none answering: six attempts would all go to it.
    dns.set(
      `mx1.${domain}`,
      [1, 2, 3, 4, 5, 6].map((i) => ({ type: 'A' as const, address: `127.0.1.${i}` })),
    );

    const [outcome] = await mta().deliver(request(domain, ['ok']));

    expect(outcome).toMatchObject({ status: 'delivered', mx: `mx2.${domain}` });
    expect(backup.messages).toHaveLength(1);
  });

  it('defers every recipient when MAIL FROM gets a 4xx, though the pipelined RCPTs were answered 503', async () => {
    const mx = await sink({ mailFrom: () => ({ code: 451, message: '4.7.1 Greylisted, try again later' }) });
    const domain = domainWithMx(mx.host);

    const outcomes = await mta().deliver(request(domain, ['ok1', 'ok2']));

    expect(outcomes).toEqual(
      ['ok1', 'ok2'].map((l) => ({
        status: 'deferred',
        recipient: `${l}@${domain}`,
        code: 451,
        enhanced: '4.7.1',
        response: '451 4.7.1 Greylisted, try again later',
        mx: `mx1.${domain}`,
      })),
    );
  });

  it('bounces on a 5xx to MAIL FROM with its own class, suppressing no recipient', async () => {
    const mx = await sink({ mailFrom: () => ({ code: 550, message: '5.7.1 Sending IP listed' }) });
    const domain = domainWithMx(mx.host);

    const outcomes = await mta().deliver(request(domain, ['ok1', 'ok2']));

    expect(outcomes.map((o) => [o.status, o.code, 'bounce' in o ? o.bounce : null])).toEqual([
      ['bounced', 550, { type: 'Transient', subType: 'ContentRejected', suppress: false }],
      ['bounced', 550, { type: 'Transient', subType: 'ContentRejected', suppress: false }],
    ]);
  });

  it('sends the recipients refused with 452 4.5.3 (too many recipients) in new transactions at once', async () => {
    const mx = await sink({ maxRecipients: 2 });
    const domain = domainWithMx(mx.host);

    const outcomes = await mta().deliver(request(domain, ['ok1', 'ok2', 'ok3', 'hard1', 'ok4', 'ok5', 'ok6']));

    expect(outcomes.map((o) => [o.recipient.split('@')[0], o.status])).toEqual([
      ['ok1', 'delivered'],
      ['ok2', 'delivered'],
      ['ok3', 'delivered'],
      ['hard1', 'bounced'],
      ['ok4', 'delivered'],
      ['ok5', 'delivered'],
      ['ok6', 'delivered'],
    ]);
    await mx.waitForMessages(3);
    expect(mx.messages.map((m) => m.to.map((t) => t.split('@')[0]))).toEqual([
      ['ok1', 'ok2'],
      ['ok3', 'ok4'],
      ['ok5', 'ok6'],
    ]);
  });

  it('defers with 451 4.4.2, never delivered, when the connection drops after the final dot', async () => {
    const mx = await sink();
    const domain = domainWithMx(mx.host);

    const outcomes = await mta().deliver(request(domain, ['drop', 'hard']));

    expect(outcomes[0]).toMatchObject({ status: 'deferred', code: 451, enhanced: '4.4.2', mx: `mx1.${domain}` });
    expect(outcomes[1]).toMatchObject({ status: 'bounced', code: 550, bounce: { suppress: true } });
    expect(mx.messages).toHaveLength(0);
  });

  it('reuses one connection for consecutive messages to the same MX', async () => {
    const mx = await sink();
    const domain = domainWithMx(mx.host);
    const shared = mta();

    for (let i = 0; i < 3; i++) expect((await shared.deliver(request(domain, ['ok'])))[0]!.status).toBe('delivered');
    // a refused transaction (RSET after it) does not cost the session either
    expect((await shared.deliver(request(domain, ['hard'])))[0]!.status).toBe('bounced');
    expect((await shared.deliver(request(domain, ['ok'])))[0]!.status).toBe('delivered');

    expect(mx.messages).toHaveLength(4);
    expect(mx.connections()).toBe(1);
  });

  it('opens a new connection after maxMessagesPerConnection or once idleMs has passed', async () => {
    const mx = await sink();
    const domain = domainWithMx(mx.host);
    const limited = mta({ maxMessagesPerConnection: 2, idleMs: 200 });

    for (let i = 0; i < 3; i++) await limited.deliver(request(domain, ['ok']));
    expect(mx.connections()).toBe(2);
    // The third message's session, idle since, is quit once idleMs has passed.
    await waitFor('the idle session to be closed', () => mx.openSessions() === 0);
    await limited.deliver(request(domain, ['ok']));
    expect(mx.connections()).toBe(3);
  });

  it('keeps at most maxConnectionsPerDestination sessions open to one MX', async () => {
    const mx = await sink();
    const domain = domainWithMx(mx.host);
    const bounded = mta({ maxConnectionsPerDestination: 2 });

    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => bounded.deliver(request(domain, [`ok${i}`]))),
    );

    expect(outcomes.flat().every((o) => o.status === 'delivered')).toBe(true);
    expect(mx.messages).toHaveLength(20);
    expect(mx.maxOpenSessions()).toBeLessThanOrEqual(2);
    expect(mx.connections()).toBeLessThanOrEqual(2);
  });

  it('uses STARTTLS when the MX offers it, and plaintext when it does not', async () => {
    const tls = await sink();
    const plain = await sink({ tls: false });
    const shared = mta();

    await shared.deliver(request(domainWithMx(tls.host), ['ok']));
    await shared.deliver(request(domainWithMx(plain.host), ['ok']));

    expect(tls.messages.map((m) => m.secure)).toEqual([true]);
    expect(plain.messages.map((m) => m.secure)).toEqual([false]);
  });

  it('retries the same MX in plaintext when the STARTTLS handshake fails, unless TLS is required', async () => {
    const broken = await sink({ tls: 'broken' });
    const domain = domainWithMx(broken.host);

    const [opportunistic] = await mta().deliver(request(domain, ['ok']));
    expect(opportunistic).toMatchObject({ status: 'delivered', mx: `mx1.${domain}` });
    expect(broken.messages.map((m) => m.secure)).toEqual([false]);
    expect(broken.connections()).toBe(2);

    const [required] = await mta().deliver(request(domain, ['ok'], { requireTls: true }));
    expect(required).toMatchObject({ status: 'deferred', code: 451, enhanced: '4.7.10' });
    expect(broken.messages).toHaveLength(1);
  });

  it('defers instead of sending in plaintext when TLS is required and the MX has no STARTTLS', async () => {
    const plain = await sink({ tls: false });
    const domain = domainWithMx(plain.host);

    const [outcome] = await mta().deliver(request(domain, ['ok'], { requireTls: true }));

    expect(outcome).toMatchObject({ status: 'deferred', code: 451, enhanced: '4.7.10' });
    expect(plain.messages).toHaveLength(0);
  });

  it('delivers over TLS when TLS is required and offered', async () => {
    const tls = await sink();
    const [outcome] = await mta().deliver(request(domainWithMx(tls.host), ['ok'], { requireTls: true }));
    expect(outcome).toMatchObject({ status: 'delivered' });
    expect(tls.messages.map((m) => m.secure)).toEqual([true]);
  });

  it('closes idle sessions on close()', async () => {
    const mx = await sink();
    const closing = mta({ idleMs: 60_000 });
    await closing.deliver(request(domainWithMx(mx.host), ['ok']));
    expect(mx.openSessions()).toBe(1);

    await closing.close();

    await waitFor('the sink to see the session end', () => mx.openSessions() === 0, 2000);
  });
});

describe('MTA transcripts', () => {
  it('keeps each command and reply of a STARTTLS delivery with the TLS it got, never the message', async () => {
    const mx = await sink();
    const domain = domainWithMx(mx.host);
    const trace: SmtpTrace[] = [];

    await mta().deliver(request(domain, ['ok', 'full'], { trace }));

    expect(trace).toHaveLength(1);
    const [t] = trace;
    expect(t).toMatchObject({
      mx: `mx1.${domain}`,
      ip: mx.host,
      port,
      tls: { version: expect.stringMatching(/^TLSv1\.[23]$/), cipher: expect.any(String) },
      recipients: [`ok@${domain}`, `full@${domain}`],
      omitted: 0,
    });
    expect(t!.lines).toEqual(
      expect.arrayContaining([
        `* connecting to ${mx.host} port ${port}`,
        expect.stringMatching(/^S: 220 /),
        'C: EHLO mta.postline.test',
        'C: STARTTLS',
        expect.stringMatching(/^\* TLS TLSv1\.[23] /),
        'C: MAIL FROM:<b.0.x.aaaaaaaaaa@send.sender.test> SIZE=' + raw.length,
        `C: RCPT TO:<ok@${domain}>`,
        `C: RCPT TO:<full@${domain}>`,
        'S: 552 5.2.2 Mailbox full',
        'C: DATA',
        `* the message, ${raw.length} bytes (not kept)`,
        expect.stringMatching(/^S: 250 /),
      ]),
    );
    // In order: the greeting before EHLO, DATA after the RCPTs.
    const at = (pattern: RegExp) => t!.lines.findIndex((line) => pattern.test(line));
    expect(at(/^S: 220/)).toBeLessThan(at(/^C: EHLO/));
    expect(at(/^C: RCPT TO:<full/)).toBeLessThan(at(/^C: DATA/));
    expect(t!.lines.join('\n')).not.toMatch(/Subject: hi|hello/);
  });

  it('traces each MX address tried, the down one with why, and a reused session without its greeting', async () => {
    const second = await sink({ tls: false });
    const domain = domainWithMx(DOWN, second.host);
    const shared = mta();
    const first: SmtpTrace[] = [];
    const again: SmtpTrace[] = [];

    await shared.deliver(request(domain, ['ok'], { trace: first }));
    await shared.deliver(request(domain, ['ok'], { trace: again }));

    expect(first.map((t) => [t.mx, t.ip, t.tls])).toEqual([
      [`mx1.${domain}`, DOWN, null],
      [`mx2.${domain}`, second.host, null],
    ]);
    expect(first[0]!.lines).toEqual([`* connecting to ${DOWN} port ${port}`, expect.stringMatching(/ECONNREFUSED/)]);
    expect(first[1]!.lines).toContain('C: EHLO mta.postline.test');
    // The second message: the down host again, then the open session to the second, picked up at MAIL FROM.
    expect(again[1]!.lines[0]).toBe(`* reusing the open session to ${second.host} (message 2 on it)`);
    expect(again[1]!.lines).not.toContain('C: EHLO mta.postline.test');
    expect(again[1]!.lines).toContain(`C: RCPT TO:<ok@${domain}>`);
  });

  it('traces an MX lookup that gave no host to try', async () => {
    const domain = `${uniqueName('nullmx').toLowerCase().replace(/_/g, '-')}.test`;
    dns.set(domain, [{ type: 'MX', exchange: '.', priority: 0 }]);
    const trace: SmtpTrace[] = [];

    await mta().deliver(request(domain, ['ok'], { trace }));

    expect(trace).toEqual([
      expect.objectContaining({
        mx: null,
        ip: null,
        lines: [expect.stringMatching(new RegExp(`^\\* MX lookup of ${domain}: 556 5\\.1\\.10 `))],
      }),
    ]);
  });
});

describe('MTA address policy', () => {
  it.each([
    ['loopback', 'A', '127.0.0.1'],
    ['private', 'A', '10.0.0.5'],
    ['IPv4-mapped link-local', 'AAAA', '::ffff:169.254.169.254'],
    ['shared address space', 'A', '100.64.0.1'],
  ] as const)('bounces an MX in %s space by policy without connecting', async (_label, type, address) => {
    const mx = await sink();
    const domain = `${uniqueName('evil').toLowerCase().replace(/_/g, '-')}.test`;
    dns.set(domain, [
      { type: 'MX', exchange: `mx.${domain}`, priority: 10 },
      { type: 'MX', exchange: `sink.${domain}`, priority: 20 },
    ]);
    dns.set(`mx.${domain}`, [{ type, address }]);
    dns.set(`sink.${domain}`, [{ type: 'A', address: mx.host }]); // loopback too: dialing it would show at the sink
    const strict = mta({
      allowPrivate: false,
      resolver: createMxResolver({ servers: [dns.address], timeoutMs: 300, tries: 1, allowPrivate: false, cacheMs: 0 }),
    });

    const [outcome] = await strict.deliver(request(domain, ['ok']));

    expect(outcome).toMatchObject({
      status: 'bounced',
      code: 550,
      enhanced: '5.4.4',
      mx: null,
      bounce: { type: 'Permanent', subType: 'General', suppress: false },
    });
    expect(mx.connections()).toBe(0);
  });

  it('refuses to dial a non-public address even when the resolver hands one over', async () => {
    const mx = await sink();
    const lax: MxResolver = {
      resolve: () =>
        Promise.resolve({ kind: 'hosts', hosts: [{ exchange: 'mx.evil.test', priority: 10, addresses: [mx.host] }] }),
      cached: () => undefined,
    };

    const [outcome] = await mta({ allowPrivate: false, resolver: lax }).deliver(request('evil.test', ['ok']));

    expect(outcome).toMatchObject({ status: 'deferred', code: 451, mx: null });
    expect(mx.connections()).toBe(0);
  });
});
