// Test helpers for the inbound MX: a receiving domain verified through the real domain-verifier, and a raw
// SMTP client speaking exact bytes (for what a well-behaved client such as nodemailer never sends).
import { connect, type Socket } from 'node:net';
import type { Resend } from 'resend';
import { SMTPServer } from 'smtp-server';
import type { DnsServer } from './dns.ts';
import type { BrokerObserver } from './observe.ts';
import { freePort } from './system.ts';
import { waitFor } from './wait.ts';

/** One SMTP reply: its code and its lines' text (after the code and separator), joined with `\n`. */
export type SmtpReply = { code: number; text: string };

export type RawSmtp = {
  /** The 220 (or 421) the server greeted with. */
  greeting: SmtpReply;
  /** Writes `line` and CRLF, and reads the reply. */
  command: (line: string) => Promise<SmtpReply>;
  /** Writes bytes as they are (a DATA payload, a pipelined burst). */
  write: (bytes: string | Buffer) => void;
  /** The next reply. */
  read: () => Promise<SmtpReply>;
  /** Resolves once the server has closed the connection. */
  closed: Promise<void>;
  close: () => void;
};

/**
 * A raw SMTP session to 127.0.0.1:`port`: replies are read as the server sends them, each request written
 * byte for byte.
 *
 * @example
 * const smtp = await openRawSmtp(system.smtp.mx);
 * await smtp.command('EHLO client.test');
 */
export async function openRawSmtp(port: number): Promise<RawSmtp> {
  const socket: Socket = connect(port, '127.0.0.1');
  let buffer = '';
  const replies: SmtpReply[] = [];
  const waiting: ((reply: SmtpReply) => void)[] = [];
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (;;) {
      // A reply ends at a line `NNN text` (a space, not a dash, after the code).
      const end = /(^|\r\n)(\d{3})( [^\r\n]*|)\r\n/.exec(buffer);
      if (!end) return;
      const length = end.index + end[0].length;
      const lines = buffer
        .slice(0, length)
        .split('\r\n')
        .filter((line) => line !== '');
      buffer = buffer.slice(length);
      const reply = { code: Number(end[2]), text: lines.map((line) => line.slice(4)).join('\n') };
      const next = waiting.shift();
      if (next) next(reply);
      else replies.push(reply);
    }
  });
  const read = () =>
    new Promise<SmtpReply>((resolve, reject) => {
      const ready = replies.shift();
      if (ready) return resolve(ready);
      const timer = setTimeout(() => reject(new Error('no SMTP reply in 10 s')), 10_000);
      waiting.push((reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
    });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const greeting = await read();
  return {
    greeting,
    command: (line) => {
      socket.write(`${line}\r\n`);
      return read();
    },
    write: (bytes) => void socket.write(bytes),
    read,
    closed,
    close: () => socket.destroy(),
  };
}

/** The code the MX answers `RCPT TO:<address>` with (after EHLO and a null MAIL FROM). */
export async function rcptReply(port: number, address: string): Promise<SmtpReply> {
  const smtp = await openRawSmtp(port);
  try {
    await smtp.command('EHLO probe.test');
    await smtp.command('MAIL FROM:<>');
    return await smtp.command(`RCPT TO:<${address}>`);
  } finally {
    smtp.close();
  }
}

export type ReceivingDomain = {
  name: string;
  id: string;
  /** Every record name published in the fake DNS. */
  recordNames: string[];
};

/**
 * Creates a domain with receiving enabled (and sending, when asked) through the API, publishes its records in
 * the fake DNS as a customer would (the receiving MX at the domain itself, the others relative to
 * `example.com`, so `name` must be a subdomain of it), verifies it, and returns once the MX takes RCPT for it.
 *
 * @example
 * const domain = await createReceivingDomain({ resend, dns, events, name: 'in.example.com', mxPort: system.smtp.mx });
 */
export async function createReceivingDomain(opts: {
  resend: Resend;
  dns: DnsServer;
  /** Observes `internal.domain.state` on the events exchange. */
  events: BrokerObserver;
  name: string;
  mxPort: number;
  sending?: boolean;
}): Promise<ReceivingDomain> {
  const { resend, dns, events, name } = opts;
  const { data, error } = await resend.domains.create({
    name,
    capabilities: { sending: opts.sending ? 'enabled' : 'disabled', receiving: 'enabled' },
  });
  if (error || !data) throw new Error(`create ${name}: ${JSON.stringify(error)}`);
  const recordNames: string[] = [];
  for (const r of data.records) {
    const fqdn = r.record === 'Receiving' ? r.name : `${r.name}.example.com`;
    recordNames.push(fqdn);
    if (r.type === 'MX') dns.add(fqdn, [{ type: 'MX', exchange: r.value, priority: r.priority ?? 10 }]);
    else dns.add(fqdn, [{ type: 'TXT', value: r.value }]);
  }
  await resend.domains.verify(data.id);
  await events.waitFor(
    `${name} receiving verified`,
    (m) =>
      m.routingKey === 'internal.domain.state' &&
      m.envelope.data.domain_id === data.id &&
      m.envelope.data.receiving_verified === true,
    { timeoutMs: 20_000 },
  );
  await waitFor(
    `the MX to take mail for ${name}`,
    async () => (await rcptReply(opts.mxPort, `probe@${name}`)).code === 250,
  );
  return { name, id: data.id, recordNames };
}

/**
 * An SMTP server that only reads each message and answers 250: what the MX would cost with no policy, no
 * parsing and no storage (a benchmark's ceiling). On 127.0.0.1 at a free port.
 */
export async function startBareMx(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => callback());
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
