import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { createWaitList } from './wait.ts';

/** What the sink does with one RCPT TO (or, for `drop-after-data`, with the whole transaction; `greylist-once`: 451, then 250 for the same address). */
export type SinkReply = 250 | 451 | 452 | 550 | 552 | 'drop-after-data' | 'greylist-once';

export type SinkMxOptions = {
  /** Listen address; any 127.x.y.z works on Linux loopback, so two sinks can share a port. Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /**
   * Offer STARTTLS with smtp-server's built-in self-signed certificate (default true). `broken` offers it
   * but only with TLS 1.0, so a modern client's handshake fails.
   */
  tls?: boolean | 'broken';
  /** 421 refuses every session at the greeting (a busy or broken MX); default 220. */
  greeting?: 220 | 421;
  /**
   * The reply to a recipient. Default by local part: `soft*` → 452 4.2.2, `hard*` → 550 5.1.1, `full*` →
   * 552 5.2.2, `drop*` → accepted, then the connection is cut after the message arrives without a reply;
   * anything else 250.
   */
  behaviour?: (rcpt: string) => SinkReply;
  /** A refusal of MAIL FROM (e.g. `{ code: 451, message: '4.7.1 Greylisted' }`); default: accepted. */
  mailFrom?: (from: string) => { code: number; message: string } | undefined;
  /** RCPTs accepted per transaction; the ones after get `452 4.5.3 Too many recipients`. Default: no limit. */
  maxRecipients?: number;
};

/** A message the sink took; `at` is when its 250 was given (ms since the epoch). */
export type SinkMessage = { from: string; to: string[]; raw: Buffer; secure: boolean; at: number };

export type SinkMx = {
  host: string;
  port: number;
  /** Messages answered 250, in order. */
  messages: SinkMessage[];
  /** Sessions opened so far (refused ones included). */
  connections: () => number;
  /** Sessions open right now, and the most ever open at once. */
  openSessions: () => number;
  maxOpenSessions: () => number;
  /** Change the greeting for later sessions. */
  setGreeting: (greeting: 220 | 421) => void;
  waitForMessages: (count: number, timeoutMs?: number) => Promise<SinkMessage[]>;
  close: () => Promise<void>;
};

const REPLIES: Record<Exclude<SinkReply, 250 | 'drop-after-data' | 'greylist-once'>, string> = {
  451: '4.7.1 Greylisted, please try again later',
  452: '4.2.2 Mailbox full, try again later',
  550: '5.1.1 No such user here',
  552: '5.2.2 Mailbox full',
};

export function defaultSinkBehaviour(rcpt: string): SinkReply {
  const local = rcpt.split('@')[0]?.toLowerCase() ?? '';
  if (local.startsWith('soft')) return 452;
  if (local.startsWith('grey')) return 'greylist-once';
  if (local.startsWith('hard')) return 550;
  if (local.startsWith('full')) return 552;
  if (local.startsWith('drop')) return 'drop-after-data';
  return 250;
}

/**
 * A real smtp-server acting as the recipients' MX: no auth, optional STARTTLS, per-recipient replies, and
 * a record of what it received. Faked outside world over real sockets, for the sender's MTA tests and
 * benchmarks.
 *
 * @example
 * const sink = await startSinkMx({ host: '127.0.0.2' });
 * dns.set('recipient.test', [{ type: 'MX', exchange: 'mx.recipient.test', priority: 10 }]);
 * dns.set('mx.recipient.test', [{ type: 'A', address: sink.host }]);
 * // deliver with MX port = sink.port, then
 * await sink.waitForMessages(1);
 */
export async function startSinkMx(options: SinkMxOptions = {}): Promise<SinkMx> {
  const host = options.host ?? '127.0.0.1';
  const behaviour = options.behaviour ?? defaultSinkBehaviour;
  let greeting = options.greeting ?? 220;
  const messages: SinkMessage[] = [];
  const greylisted = new Set<string>();
  const waits = createWaitList();
  let connections = 0;
  let open = 0;
  let maxOpen = 0;

  const server: SMTPServer = new SMTPServer({
    logger: false, // also silences the warning about the built-in certificate, which is what a test wants
    authOptional: true,
    disabledCommands: options.tls === false ? ['AUTH', 'STARTTLS'] : ['AUTH'],
    hideSTARTTLS: options.tls === false,
    disableReverseLookup: true,
    closeTimeout: 1000,
    size: 50 * 1024 * 1024,
    ...(options.tls === 'broken' ? { minVersion: 'TLSv1' as const, maxVersion: 'TLSv1' as const } : {}),
    onConnect(_session, callback) {
      connections++;
      open++;
      maxOpen = Math.max(maxOpen, open);
      if (greeting === 421)
        return callback(
          Object.assign(new Error('4.3.2 Service not available, closing channel'), { responseCode: 421 }),
        );
      callback();
    },
    onClose() {
      open--;
    },
    onMailFrom(address, _session, callback) {
      const refusal = options.mailFrom?.(address.address);
      if (refusal) return callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
      callback();
    },
    onRcptTo(address, session, callback) {
      if (options.maxRecipients !== undefined && session.envelope.rcptTo.length >= options.maxRecipients) {
        return callback(Object.assign(new Error('4.5.3 Too many recipients'), { responseCode: 452 }));
      }
      let reply = behaviour(address.address);
      if (reply === 'greylist-once') {
        // The first RCPT of the address is told to come back later; the next one is accepted.
        reply = greylisted.has(address.address) ? 250 : 451;
        greylisted.add(address.address);
      }
      if (reply === 250 || reply === 'drop-after-data') return callback();
      callback(Object.assign(new Error(REPLIES[reply]), { responseCode: reply }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address);
        if (to.some((rcpt) => behaviour(rcpt) === 'drop-after-data')) {
          // The final dot arrived; cut the connection without answering it.
          socketOf(server, session)?.destroy();
          return;
        }
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
        messages.push({ from, to, raw: Buffer.concat(chunks), secure: session.secure, at: Date.now() });
        waits.notify();
        callback(null, '2.0.0 Queued');
      });
    },
  });
  server.on('error', () => undefined);

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    host,
    port,
    messages,
    connections: () => connections,
    openSessions: () => open,
    maxOpenSessions: () => maxOpen,
    setGreeting: (value) => void (greeting = value),
    waitForMessages: (count, timeoutMs = 10_000) =>
      waits.until(
        `${count} messages at the sink MX ${host}:${port}`,
        () => (messages.length >= count ? messages.slice(0, count) : undefined),
        timeoutMs,
        () => `got ${messages.length}`,
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The socket of a session, to cut it mid-transaction (smtp-server exposes its connections, not sockets). */
function socketOf(server: SMTPServer, session: SMTPServerSession): { destroy: () => void } | undefined {
  for (const connection of server.connections) {
    if (connection.session === session) return connection._socket;
  }
  return undefined;
}
