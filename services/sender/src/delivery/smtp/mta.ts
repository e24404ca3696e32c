import { Readable } from 'node:stream';
import { checkTargetAddress, formatSmtpReply, type Logger } from '@postline/platform';
import { createSessionOpener } from './connect.ts';
import type { MxHost, MxResolver } from './mx.ts';
import {
  failureOf,
  LOCAL_REPLIES,
  localOutcome,
  localReply,
  outcomeFromReply,
  storable,
  tooManyRecipients,
  type AddressFailure,
  type SmtpError,
} from './replies.ts';
import { replyCodesOf, sanitizeReply } from '../domain/shaping-reply.ts';
import { createShaper, DEFAULT_SHAPING, signalOf, type Shaper, type Turn } from './shaping.ts';
import { createSessionPool, type PooledSession, type SessionPool } from './session-pool.ts';
import { createTranscript, NO_TRANSCRIPT, type Transcript } from './transcript.ts';
import type { DeliveryRequest, Mta, RecipientOutcome } from './types.ts';

export type MtaOptions = {
  resolver: MxResolver;
  /** MX_DELIVERY_PORT: 25 in production, the sink's port in tests. */
  port: number;
  /** EHLO name: the sending host's FQDN. */
  heloName: string;
  /** Dial private, loopback and other non-public addresses (local development and tests only). */
  allowPrivate: boolean;
  /** TCP connect (default 30 s). */
  connectTimeoutMs?: number;
  /** Greeting, and again for the STARTTLS handshake (default 30 s). */
  greetingTimeoutMs?: number;
  /** Inactivity during a session, e.g. waiting for the reply to the final dot (default 10 min, RFC 5321 §4.5.3.2). */
  socketTimeoutMs?: number;
  /** Transactions (and so sessions) open at once per MX address and port (default 5, Postfix's initial concurrency). */
  maxConnectionsPerDestination?: number;
  /** Messages per session before it is closed (default 100). */
  maxMessagesPerConnection?: number;
  /** How long a session stays open for the next message (default 2 s, Postfix's connection cache time). */
  idleMs?: number;
  /**
   * Addresses tried per delivery across all MX hosts (default 6), at most half of them of one host while
   * another host is left, so that a host with many addresses cannot use up the attempts of the next (RFC 5321
   * §5.1 asks for at least two hosts).
   */
  maxAddressesPerDelivery?: number;
  /**
   * How long a delivery waits for one of a destination's transaction slots before it is deferred with
   * 451 4.4.5 (default 5 min): a slow or tarpitting MX cannot hold every delivery worker for longer, nor
   * keep a message unacked past the broker's consumer timeout.
   */
  slotWaitMs?: number;
  /**
   * Traffic shaping per mailbox provider (rate, sessions, messages per session, back-off on pushback);
   * default: one with the default limits.
   */
  shaper?: Shaper;
  /** Told the local address of each SMTP connection made (the traffic shaping view's sending IP). */
  onLocalAddress?: (ip: string) => void;
  /** How long close() waits for transactions in flight before cutting them (default 10 s). */
  closeTimeoutMs?: number;
  logger?: Logger;
};

/** The envelope nodemailer's send() fills in place with the RCPT results (SMTPConnectionEnvelope). */
type Envelope = { from: string; to: string[]; size: number; accepted?: string[]; rejectedErrors?: SmtpError[] };

/**
 * What trying one MX address (or one transaction on it) gave: an outcome for every recipient, or nothing
 * sent and the next address to be tried.
 */
/** One outcome per recipient, for what happened to the transaction as a whole (no MX, no answer, busy). */
function eachRecipient(recipients: string[], outcome: (r: string) => RecipientOutcome): Map<string, RecipientOutcome> {
  return new Map(recipients.map((r) => [r, outcome(r)]));
}

type AddressTry = { kind: 'done'; outcomes: Map<string, RecipientOutcome> } | { kind: 'next'; failure: AddressFailure };

/** Characters that cannot appear in RCPT TO: nodemailer would refuse the whole envelope for them. */
const UNSENDABLE = /[\s<>]/;

/**
 * The outbound MTA over nodemailer's SMTPConnection (RFC 5321). We resolve MX hosts ourselves and
 * dial IP addresses, so nodemailer never does DNS (and never falls back to localhost); the MX name is the
 * SNI name and the EHLO goes out as `heloName`. Every address is checked before dialing and again once
 * connected. Sessions are reused per MX address and port with at most `maxConnectionsPerDestination`
 * transactions at once; the rest wait in line.
 */
export function createMta(options: MtaOptions): Mta {
  const maxAddresses = Math.max(2, options.maxAddressesPerDelivery ?? 6);
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  const slotWaitMs = options.slotWaitMs ?? 5 * 60_000;
  const pool: SessionPool = createSessionPool({
    maxPerDestination: options.maxConnectionsPerDestination ?? 5,
    maxMessagesPerSession: options.maxMessagesPerConnection ?? 100,
    idleMs: options.idleMs ?? 2000,
  });
  const shaper = options.shaper ?? createShaper({ config: DEFAULT_SHAPING });
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;

  const allowed = (ip: string) => checkTargetAddress(ip, { allowPrivate: options.allowPrivate });
  const openSession = createSessionOpener({
    port: options.port,
    heloName: options.heloName,
    connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
    greetingTimeoutMs: options.greetingTimeoutMs ?? 30_000,
    socketTimeoutMs: options.socketTimeoutMs ?? 10 * 60_000,
    allowed,
    pool,
    ...(options.onLocalAddress ? { onLocalAddress: options.onLocalAddress } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });

  async function deliver(request: DeliveryRequest): Promise<RecipientOutcome[]> {
    const outcomes = new Map<string, RecipientOutcome>();
    const recipients = [...new Set(request.recipients)];
    const sendable = recipients.filter((r) => r !== '' && !UNSENDABLE.test(r));
    for (const r of recipients)
      if (!sendable.includes(r)) outcomes.set(r, localOutcome(r, LOCAL_REPLIES.badAddress, null));

    if (closed) {
      for (const r of sendable)
        outcomes.set(r, localOutcome(r, LOCAL_REPLIES.localError, null, 'MTA is shutting down'));
    } else if (sendable.length > 0) {
      try {
        for (const [r, outcome] of await route(request, sendable)) outcomes.set(r, outcome);
      } catch (error) {
        options.logger?.error({ err: error, domain: request.domain }, 'unexpected MTA failure');
        for (const r of sendable) outcomes.set(r, localOutcome(r, LOCAL_REPLIES.localError, null, String(error)));
      }
    }
    return request.recipients.map((r) =>
      storable(outcomes.get(r) ?? localOutcome(r, LOCAL_REPLIES.localError, null, 'no outcome')),
    );
  }

  async function route(request: DeliveryRequest, recipients: string[]): Promise<Map<string, RecipientOutcome>> {
    const started = new Date();
    const mx = await options.resolver.resolve(request.domain);
    if (mx.kind !== 'hosts')
      request.trace?.push({
        mx: null,
        ip: null,
        port: null,
        tls: null,
        startedAt: started,
        durationMs: Date.now() - started.getTime(),
        recipients,
        lines: [`* MX lookup of ${request.domain}: ${formatSmtpReply(mx)}`],
        omitted: 0,
      });
    switch (mx.kind) {
      case 'permanent': {
        const bounce = { type: 'Permanent' as const, subType: mx.subType, suppress: mx.subType === 'NoEmail' };
        const response = formatSmtpReply(mx);
        return eachRecipient(recipients, (r) => ({
          status: 'bounced',
          recipient: r,
          code: mx.code,
          enhanced: mx.enhanced,
          response,
          mx: null,
          bounce,
        }));
      }
      case 'temporary':
        return eachRecipient(recipients, (r) => ({
          status: 'deferred',
          recipient: r,
          code: mx.code,
          enhanced: mx.enhanced,
          response: formatSmtpReply(mx),
          mx: null,
        }));
      case 'hosts':
        return shaped(mx.hosts, request, recipients);
    }
  }

  /**
   * tryHosts in a turn of the provider's shaping. A provider that is held, or whose rate has no room
   * within the slot wait, defers the recipients at once until it has (`throttle`), without a connection.
   */
  async function shaped(
    hosts: MxHost[],
    request: DeliveryRequest,
    recipients: string[],
  ): Promise<Map<string, RecipientOutcome>> {
    const key = shaper.keyOf(hosts[0]!.exchange);
    const turn = await shaper.admit(key, slotWaitMs);
    if (turn.kind === 'wait') return throttled(key, turn, request, recipients);
    let outcomes: Map<string, RecipientOutcome> | undefined;
    try {
      outcomes = await tryHosts(hosts, request, recipients, turn.maxMessagesPerConnection);
      return outcomes;
    } finally {
      turn.done(outcomes ? signalOf(outcomes.values()) : { kind: 'none' });
    }
  }

  /** Every recipient deferred without a connection by the shaping of the provider at `key`, until its next turn. */
  function throttled(
    key: string,
    wait: Turn & { kind: 'wait' },
    request: Pick<DeliveryRequest, 'trace'>,
    recipients: string[],
  ): Map<string, RecipientOutcome> {
    // The reply that slowed the provider was given to some delivery, perhaps another team's: this team reads
    // it as the view shows it to every team (the codes and the provider's words; another server's codes only).
    const reason = key.startsWith('other:') ? (replyCodesOf(wait.reason) ?? 'a pushback') : sanitizeReply(wait.reason);
    const detail = wait.held
      ? `deliveries to ${key} are held until ${wait.until.toISOString()} after it answered: ${reason}`
      : `deliveries to ${key} are slowed (${reason}); next turn at ${wait.until.toISOString()}`;
    request.trace?.push({
      mx: null,
      ip: null,
      port: null,
      tls: null,
      startedAt: new Date(),
      durationMs: 0,
      recipients,
      lines: [`* ${detail}`],
      omitted: 0,
    });
    const { code, enhanced, response } = localReply(LOCAL_REPLIES.providerThrottled, detail);
    const throttle = { provider: key, until: wait.until };
    return eachRecipient(recipients, (r) => ({
      status: 'deferred',
      recipient: r,
      code,
      enhanced,
      response,
      mx: null,
      throttle,
    }));
  }

  /** Each address of each MX host in order until one gives per-recipient results. */
  async function tryHosts(
    hosts: MxHost[],
    request: DeliveryRequest,
    recipients: string[],
    perSession: number,
  ): Promise<Map<string, RecipientOutcome>> {
    const failures: AddressFailure[] = [];
    for (const { exchange, address } of addressesToTry(hosts, maxAddresses)) {
      const tried = await tryAddress(exchange, address, request, recipients, perSession);
      if (tried.kind === 'done') return sendRest(tried.outcomes, exchange, address, request, perSession);
      options.logger?.info(
        { domain: request.domain, mx: exchange, ip: address, reason: tried.failure.response },
        'MX address failed, trying the next',
      );
      failures.push(tried.failure);
    }
    // Nothing delivered anywhere: defer, naming a TLS failure when TLS was required, else the last reply.
    const tlsFailure = request.requireTls ? failures.find((f) => f.tls) : undefined;
    const reported = tlsFailure
      ? {
          ...tlsFailure,
          code: LOCAL_REPLIES.tlsRequired.code,
          enhanced: LOCAL_REPLIES.tlsRequired.enhanced,
          response: `${formatSmtpReply(LOCAL_REPLIES.tlsRequired)}: ${tlsFailure.response}`,
        }
      : (failures.at(-1) ?? { mx: null, ...localReply(LOCAL_REPLIES.noAnswer) });
    return eachRecipient(recipients, (r) => ({
      status: 'deferred',
      recipient: r,
      code: reported.code,
      enhanced: reported.enhanced,
      response: reported.response,
      mx: reported.mx,
    }));
  }

  /**
   * A server that takes only so many recipients a transaction answers the rest `452 4.5.3 Too many
   * recipients`: they go in a new transaction to the same address at once (RFC 5321 §4.5.3.1.10), as long as
   * each transaction gets some recipients through; what is left when none does stays deferred.
   */
  async function sendRest(
    outcomes: Map<string, RecipientOutcome>,
    mx: string,
    ip: string,
    request: DeliveryRequest,
    perSession: number,
  ): Promise<Map<string, RecipientOutcome>> {
    let sent = outcomes.size;
    for (;;) {
      const rest = [...outcomes.values()].filter(tooManyRecipients).map((o) => o.recipient);
      if (rest.length === 0 || rest.length >= sent || closed) return outcomes;
      const next = await tryAddress(mx, ip, request, rest, perSession);
      if (next.kind !== 'done') return outcomes;
      for (const [r, outcome] of next.outcomes) outcomes.set(r, outcome);
      sent = rest.length;
    }
  }

  /** tryAddress, traced into the request's trace when it asks for one. */
  async function tryAddress(
    mx: string,
    ip: string,
    request: DeliveryRequest,
    recipients: string[],
    perSession: number,
  ): Promise<AddressTry> {
    if (!request.trace) return tryAddressOnce(mx, ip, request, recipients, perSession, undefined);
    const started = new Date();
    const transcript = createTranscript();
    const trace = { session: undefined as PooledSession | undefined };
    try {
      return await tryAddressOnce(mx, ip, request, recipients, perSession, { transcript, trace });
    } finally {
      request.trace.push({
        mx,
        ip,
        port: options.port,
        tls: trace.session?.tls ?? null,
        startedAt: started,
        durationMs: Date.now() - started.getTime(),
        recipients,
        ...transcript.read(),
      });
    }
  }

  /**
   * One transaction at one MX address, in one of its slots: on an idle session if one fits, else (or when
   * the idle one turns out stale) on a new one. With `traced`, what happens goes into its transcript and the
   * session the transaction last ran on is kept in it.
   */
  async function tryAddressOnce(
    mx: string,
    ip: string,
    request: DeliveryRequest,
    recipients: string[],
    perSession: number,
    traced: { transcript: Transcript; trace: { session: PooledSession | undefined } } | undefined,
  ): Promise<AddressTry> {
    const transcript = traced?.transcript ?? NO_TRANSCRIPT;
    const check = allowed(ip);
    if (!check.ok) {
      transcript.add(`* refused to dial ${ip} (${check.reason})`);
      return {
        kind: 'next',
        failure: { mx: null, ...localReply(LOCAL_REPLIES.noAnswer, `refused to dial ${ip} (${check.reason})`) },
      };
    }
    const key = `${ip}|${options.port}`;
    const release = await pool.acquire(key, slotWaitMs);
    if (!release) {
      // Deferred at once, not tried at the next address: a wait at each would add up past the broker's
      // consumer timeout.
      const detail = `${ip}: no session free within ${slotWaitMs} ms`;
      transcript.add(`* ${detail}`);
      return {
        kind: 'done',
        outcomes: eachRecipient(recipients, (r) => localOutcome(r, LOCAL_REPLIES.destinationBusy, null, detail)),
      };
    }
    try {
      let session = pool.takeIdle(key, (s) => !request.requireTls || s.secure);
      let maybeStale = session !== undefined; // the server may have dropped an idle session meanwhile
      for (;;) {
        if (closed)
          return {
            kind: 'next',
            failure: { mx: null, ...localReply(LOCAL_REPLIES.localError, 'MTA is shutting down') },
          };
        if (session) {
          transcript.add(`* reusing the open session to ${ip} (message ${session.messages + 1} on it)`);
          if (session.tls) transcript.add(`* TLS ${session.tls.version} ${session.tls.cipher}`);
        } else {
          const opened = await openSession(mx, ip, key, request.requireTls, transcript);
          if ('failure' in opened) return { kind: 'next', failure: opened.failure };
          session = opened;
        }
        session.maxMessages = perSession;
        if (traced) traced.trace.session = session;
        session.sink.current = transcript;
        const result = await transact(session, mx, request, recipients);
        session.sink.current = undefined;
        if (result.kind === 'done') return result;
        // Nothing went out. A reused session may simply have gone stale: once more on a fresh one.
        if (!maybeStale) return result;
        maybeStale = false;
        session = undefined;
      }
    } finally {
      release();
    }
  }

  /** One transaction on an open session: per-recipient outcomes, or 'next' when nothing went out. */
  async function transact(
    session: PooledSession,
    mx: string,
    request: DeliveryRequest,
    recipients: string[],
  ): Promise<AddressTry> {
    const { conn } = session;
    let dataStarted = false;
    // nodemailer reads the body only after the server answered DATA with 354: from then on a lost
    // connection may have delivered the message, so it is deferred, never retried elsewhere at once.
    const body = new Readable({
      read() {
        dataStarted = true;
        session.sink.current?.add(`* the message, ${request.raw.length} bytes (not kept)`);
        this.push(request.raw);
        this.push(null);
      },
    });
    const envelope: Envelope = { from: request.envelopeFrom, to: recipients, size: request.raw.length };
    const sent = await new Promise<{ error: SmtpError } | { response: string }>((resolve) => {
      conn.send(envelope, body, (error, info) =>
        resolve(error ? { error: error as SmtpError } : { response: info.response }),
      );
    });

    const outcomes = new Map<string, RecipientOutcome>();
    const rejected = new Map<string, SmtpError>();
    // A refused MAIL FROM ends the transaction for every recipient. With PIPELINING the RCPTs that went out
    // with it are answered `503 need MAIL command`, which says nothing about the recipients: they all get
    // the reply to MAIL FROM (a 451 greylisting is a deferral, not a bounce of each recipient).
    const mailRefused = 'error' in sent && sent.error.command === 'MAIL FROM';
    for (const e of mailRefused
      ? []
      : [...(envelope.rejectedErrors ?? []), ...('error' in sent ? (sent.error.rejectedErrors ?? []) : [])]) {
      if (e.recipient !== undefined && e.responseCode) rejected.set(e.recipient, e);
    }
    const perRecipient = (otherwise: (r: string) => RecipientOutcome) => {
      for (const r of recipients) {
        const refused = rejected.get(r);
        outcomes.set(
          r,
          refused ? outcomeFromReply(r, refused.responseCode!, refused.response ?? '', mx, 'recipient') : otherwise(r),
        );
      }
    };

    if ('response' in sent) {
      session.messages++;
      pool.putIdle(session);
      const accepted = new Set(envelope.accepted ?? recipients);
      perRecipient((r) =>
        accepted.has(r)
          ? {
              status: 'delivered',
              recipient: r,
              code: Number(/^\d{3}/.exec(sent.response)?.[0] ?? 250),
              response: sent.response,
              mx,
            }
          : localOutcome(r, LOCAL_REPLIES.localError, mx, 'server reported neither acceptance nor rejection'),
      );
      return { kind: 'done', outcomes };
    }

    const { error } = sent;
    const code = error.responseCode;
    if (dataStarted) {
      perRecipient((r) =>
        code && code >= 400
          ? outcomeFromReply(r, code, error.response ?? '', mx, 'transaction')
          : localOutcome(r, LOCAL_REPLIES.connectionLost, mx, error.message),
      );
      await settle(session, Boolean(code) && code !== 421);
      return { kind: 'done', outcomes };
    }
    if (error.code === 'EMESSAGE' && error.command === 'MAIL FROM' && !code) {
      // Larger than the SIZE the server announced; nothing was sent.
      perRecipient((r) => localOutcome(r, LOCAL_REPLIES.messageTooLarge, mx, error.message));
      pool.putIdle(session);
      return { kind: 'done', outcomes };
    }
    if (error.command === 'API' && error.code === 'EENVELOPE') {
      perRecipient((r) => localOutcome(r, LOCAL_REPLIES.localError, mx, error.message));
      pool.putIdle(session);
      return { kind: 'done', outcomes };
    }
    if (code && code >= 400 && code !== 421 && !conn.destroyed) {
      // A reply ended the transaction: MAIL FROM refused, every RCPT refused, or DATA refused.
      perRecipient((r) => outcomeFromReply(r, code, error.response ?? '', mx, 'transaction'));
      await settle(session, true);
      return { kind: 'done', outcomes };
    }
    // 421 or a lost connection before the message went out: nothing delivered, another host may do.
    conn.close();
    return { kind: 'next', failure: failureOf(error, mx, false) };
  }

  /** After a failed transaction: RSET and keep the session, or close it. */
  async function settle(session: PooledSession, reusable: boolean): Promise<void> {
    if (!reusable || session.conn.destroyed) return session.conn.close();
    const reset = await new Promise<boolean>((resolve) => session.conn.reset((error) => resolve(!error)));
    if (reset) pool.putIdle(session);
    else session.conn.close();
  }

  return {
    deliver(request) {
      const running = deliver(request);
      inFlight.add(running);
      void running.finally(() => inFlight.delete(running));
      return running;
    },
    held(request) {
      // Only a whole delivery that deliver would defer alike (every recipient sendable, the MTA open), from
      // the MX answer already kept: a domain not looked up lately is left to deliver, not asked of DNS twice.
      const recipients = [...new Set(request.recipients)];
      if (closed || recipients.some((r) => r === '' || UNSENDABLE.test(r))) return Promise.resolve(undefined);
      const mx = options.resolver.cached(request.domain);
      if (mx?.kind !== 'hosts') return Promise.resolve(undefined);
      const key = shaper.keyOf(mx.hosts[0]!.exchange);
      const wait = shaper.held(key);
      if (!wait) return Promise.resolve(undefined);
      const outcomes = throttled(key, wait, request, recipients);
      return Promise.resolve(request.recipients.map((r) => storable(outcomes.get(r)!)));
    },
    inFlight: () => inFlight.size,
    async close() {
      closed = true;
      const sessions = pool.close(closeTimeoutMs);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...inFlight]),
        new Promise((resolve) => (timer = setTimeout(resolve, closeTimeoutMs))),
      ]);
      clearTimeout(timer);
      await sessions;
    },
  };
}

/**
 * The addresses to try, in MX preference order: each host's in turn, but while another host is left a host
 * gets at most half of `max` (and at least one), so a primary with six addresses still leaves the backup
 * its turn.
 */
export function addressesToTry(hosts: readonly MxHost[], max: number): { exchange: string; address: string }[] {
  const perHost = Math.max(1, Math.floor(max / 2));
  const out: { exchange: string; address: string }[] = [];
  hosts.forEach((host, i) => {
    const last = i === hosts.length - 1;
    const take = last ? max - out.length : Math.min(perHost, max - out.length);
    for (const address of host.addresses.slice(0, Math.max(0, take))) out.push({ exchange: host.exchange, address });
  });
  return out;
}
