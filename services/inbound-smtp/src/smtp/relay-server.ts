// The SMTP relay (authenticated submission): smtp-server on SMTP_RELAY_PORT with STARTTLS (587 in
// production) and on SMTP_RELAY_TLS_PORT with implicit TLS (465), the policy in its hooks. AUTH PLAIN or
// LOGIN only over TLS (smtp-server answers 538 before STARTTLS), username `postline` or `resend`, the
// password an API key the gateway checks; without AUTH, MAIL, RCPT and DATA get 530, so it is never an
// open relay. Each message goes to the gateway as POST /emails (message/rfc822) and the client gets the
// gateway's verdict: 250 only when the gateway answered 200 (RFC 5321 §6.1: a 250 accepts responsibility).
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { smtpReplyError, smtpReplyText, type Logger, type SmtpReply } from '@postline/platform';
import { RAW_EMAIL_BODY } from '@postline/contracts';
import { normalizeLineEndings } from '../domain/line-endings.ts';
import { createAuthFailureLimit } from '../domain/relay-auth-limit.ts';
import { envelopeAddressProblem, idempotencyKeyOf, isRelayUsername, looksLikeApiKey } from '../domain/relay-message.ts';
import {
  credentialsVerdict,
  RELAY_REPLIES,
  submissionReply,
  type GatewayAnswer,
  type RelayOutcome,
} from '../domain/relay-replies.ts';
import type { InboundMetrics } from '../metrics.ts';
import type { RelayGateway } from '../gateway/relay-gateway.ts';
import type { TlsCredentials } from '../tls/tls.ts';
import { readMessage } from './read-message.ts';
import { createSessionGuard, type OpenConnection } from './session-guard.ts';

export type RelayLimits = {
  /** The largest message taken, in bytes (announced with SIZE; 552 5.3.4 past it): the gateway's raw limit. */
  maxMessageBytes: number;
  /** Recipients per message (452 4.5.3 past it): POST /emails's limit. */
  maxRecipients: number;
  /** A session whose client says nothing for this long is closed (421). */
  idleTimeoutMs: number;
  /** A session ends after this long (after the message in flight, if any), so none is held forever. */
  sessionTimeoutMs: number;
  /** Sessions open at once from one client address, on both ports together (more: 421 4.7.0 at connect). */
  maxSessionsPerIp: number;
  /** AUTH failures from one client (IPv6: its /64) within `authFailureWindowMs` that lock it out. */
  maxAuthFailures: number;
  authFailureWindowMs: number;
  /** How long a locked-out client's AUTH is refused (421 4.7.0) without asking the gateway. */
  authLockoutMs: number;
  /** How long stop() lets messages in flight finish before closing their sessions (421). */
  closeTimeoutMs: number;
};

export const DEFAULT_RELAY_LIMITS: RelayLimits = {
  maxMessageBytes: RAW_EMAIL_BODY.limitBytes,
  maxRecipients: 50,
  idleTimeoutMs: 60_000,
  sessionTimeoutMs: 30 * 60_000,
  maxSessionsPerIp: 20,
  maxAuthFailures: 10,
  authFailureWindowMs: 5 * 60_000,
  authLockoutMs: 5 * 60_000,
  closeTimeoutMs: 5_000,
};

export type RelayServerDeps = {
  ports: { starttls: number; implicitTls: number };
  /** Named in the greeting (INBOUND_MX_HOST: the certificate's name). */
  hostName: string;
  tls: TlsCredentials;
  gateway: RelayGateway;
  metrics: InboundMetrics;
  logger: Logger;
  limits?: Partial<RelayLimits>;
  now?: () => Date;
};

/** What an admitted relay session is doing now: a message in flight, and whether it ends after it. */
type MessageState = { inFlight: boolean; endAfterMessage: boolean };

export function createRelayServers(deps: RelayServerDeps): {
  name: string;
  start: () => Promise<void>;
  stop: () => Promise<void>;
} {
  const limits = { ...DEFAULT_RELAY_LIMITS, ...deps.limits };
  const now = deps.now ?? (() => new Date());
  const { logger, metrics, gateway } = deps;
  const authLimit = createAuthFailureLimit({
    maxFailures: limits.maxAuthFailures,
    windowMs: limits.authFailureWindowMs,
    lockoutMs: limits.authLockoutMs,
  });
  const sessions = createSessionGuard<MessageState>({
    listener: 'relay',
    maxSessionsPerIp: limits.maxSessionsPerIp,
    sessionTimeoutMs: limits.sessionTimeoutMs,
    onTimeLimit: (id) => endSession(id, RELAY_REPLIES.sessionTooLong),
    tooManySessions: RELAY_REPLIES.tooManySessions,
    connections: () => servers.flatMap(({ server }) => [...(server.connections as Set<OpenConnection>)]),
    initialState: () => ({ inFlight: false, endAfterMessage: false }),
    metrics,
    logger,
  });
  /** The API key each authenticated session gave, kept here rather than in session.user, which smtp-server logs. */
  const apiKeys = new Map<string, string>();
  let stopping = false;

  const options: SMTPServerOptions = {
    name: deps.hostName,
    key: deps.tls.key,
    cert: deps.tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    authRequiredMessage: smtpReplyText(RELAY_REPLIES.authRequired),
    // Off: every reply of ours carries the enhanced code the platform's policy gives it (see
    // domain/relay-replies.ts), which smtp-server's automatic ones do not; the envelope travels in
    // HTTP headers, so no SMTPUTF8 addresses; DSN and REQUIRETLS requests are not carried further.
    hideENHANCEDSTATUSCODES: true,
    hideSMTPUTF8: true,
    hideDSN: true,
    hideREQUIRETLS: true,
    size: limits.maxMessageBytes,
    socketTimeout: limits.idleTimeoutMs,
    closeTimeout: limits.closeTimeoutMs,
    disableReverseLookup: true,
    logger: false,
    onConnect(session, callback) {
      if (stopping) return callback(smtpReplyError(RELAY_REPLIES.shuttingDown));
      const refusal = sessions.admit(session);
      callback(refusal && smtpReplyError(refusal));
    },
    onClose(session) {
      apiKeys.delete(session.id);
      sessions.release(session.id);
    },
    onAuth(auth, session, callback) {
      const ip = session.remoteAddress;
      if (authLimit.lockedOut(ip, now())) {
        metrics.authFailures.inc();
        callback(smtpReplyError(RELAY_REPLIES.authLockedOut(ip)));
        return void setImmediate(() => sessions.close(session.id));
      }
      const refuse = () => {
        metrics.authFailures.inc();
        if (authLimit.recordFailure(ip, now()))
          logger.warn({ ip }, 'relay AUTH locked out for this client: too many failures');
        callback(smtpReplyError(RELAY_REPLIES.badCredentials));
      };
      const password = auth.password ?? '';
      if (!isRelayUsername(auth.username ?? '') || !looksLikeApiKey(password)) return refuse();
      gateway.checkCredentials(password).then(
        (answer) => {
          const verdict = credentialsVerdict(answer);
          if (verdict.kind === 'refused') return refuse();
          if (verdict.kind === 'unavailable') {
            logger.warn({ ip, answer: describe(answer) }, 'relay AUTH could not be checked: answered 454');
            return callback(smtpReplyError(RELAY_REPLIES.authUnavailable));
          }
          // A client gone while the gateway answered leaves no key behind (onClose has run).
          if (!sessions.state(session.id)) return callback(smtpReplyError(RELAY_REPLIES.authUnavailable));
          apiKeys.set(session.id, password);
          callback(null, { user: { username: auth.username, permission: verdict.permission } });
        },
        () => callback(smtpReplyError(RELAY_REPLIES.authUnavailable)),
      );
    },
    // Both answer on the next turn, never within smtp-server's own call: its stream's continue() runs the
    // waiting callback and only then clears it, so an answer given synchronously lets a client's pipelined
    // second message end inside that call, and the callback that message installed is cleared with the old
    // one (the session then never answers again).
    onMailFrom(address, _session, callback) {
      const refusal = addressRefusal(address.address);
      setImmediate(() => callback(refusal));
    },
    onRcptTo(address, session, callback) {
      const refusal = addressRefusal(address.address);
      const rcptTo = session.envelope.rcptTo;
      const known = rcptTo.some((r) => r.address.toLowerCase() === address.address.toLowerCase());
      const tooMany = !refusal && !known && rcptTo.length >= limits.maxRecipients;
      setImmediate(() =>
        callback(
          refusal ?? (tooMany ? smtpReplyError(RELAY_REPLIES.tooManyRecipients(limits.maxRecipients)) : undefined),
        ),
      );
    },
    onData(stream, session, callback) {
      const entry = sessions.state(session.id);
      if (entry) entry.inFlight = true;
      const answer = (reply: SmtpReply, outcome: RelayOutcome | undefined, closeAfter = false) => {
        if (outcome) metrics.messages.inc({ listener: 'relay', outcome });
        if (reply.code === 250) callback(null, smtpReplyText(reply));
        else callback(smtpReplyError(reply));
        if (entry) entry.inFlight = false;
        if (closeAfter || stopping || entry?.endAfterMessage) {
          const farewell = closeAfter
            ? undefined
            : stopping
              ? RELAY_REPLIES.shuttingDown
              : RELAY_REPLIES.sessionTooLong;
          setImmediate(() => endSession(session.id, farewell));
        }
      };
      readMessage(stream).then(
        (received) => {
          const raw = received && normalizeLineEndings(received);
          if (!raw || raw.length > limits.maxMessageBytes)
            return answer(RELAY_REPLIES.tooLarge(limits.maxMessageBytes), 'rejected');
          submit(raw, session).then(
            (reply) => answer(reply, reply.outcome, reply.closeAfter),
            (err: unknown) => {
              logger.error({ err }, 'relay could not submit a message: answered 451');
              answer(RELAY_REPLIES.submitFailed, 'deferred');
            },
          );
        },
        // The client went away mid-message (or its session was cut): nobody is left to answer.
        () => answer(RELAY_REPLIES.notReceived, undefined),
      );
    },
  };

  const servers = [
    { port: deps.ports.starttls, server: new SMTPServer({ ...options, secure: false }), label: 'STARTTLS' },
    { port: deps.ports.implicitTls, server: new SMTPServer({ ...options, secure: true }), label: 'implicit TLS' },
  ];
  for (const { server } of servers) server.on('error', (err) => logger.warn({ err }, 'relay connection error'));

  async function submit(raw: Buffer, session: SMTPServerSession) {
    const apiKey = apiKeys.get(session.id);
    // smtp-server lets no DATA through without AUTH; a session without a key here is a bug, never a 250.
    if (!apiKey) return { ...RELAY_REPLIES.submitFailed, outcome: 'deferred' as const, closeAfter: false };
    const idempotency = idempotencyKeyOf(raw);
    if (!idempotency.ok) return { ...RELAY_REPLIES.badIdempotencyKey, outcome: 'rejected' as const, closeAfter: false };
    const mailFrom = session.envelope.mailFrom;
    const answer = await gateway.submit({
      apiKey,
      raw,
      envelopeFrom: mailFrom ? mailFrom.address : '',
      envelopeTo: session.envelope.rcptTo.map((r) => r.address),
      idempotencyKey: idempotency.key,
    });
    const reply = submissionReply(answer);
    if (reply.outcome === 'deferred')
      logger.warn(
        { ip: session.remoteAddress, answer: describe(answer) },
        `relay message deferred: answered ${reply.code}`,
      );
    return reply;
  }

  function addressRefusal(address: string): Error | null {
    const problem = envelopeAddressProblem(address);
    if (problem === 'non-ascii') return smtpReplyError(RELAY_REPLIES.nonAsciiAddress(address));
    if (problem === 'comma') return smtpReplyError(RELAY_REPLIES.unusableAddress(address));
    return null;
  }

  /** Ends a session now, or once its message in flight is answered. */
  function endSession(id: string, farewell?: SmtpReply): void {
    const entry = sessions.state(id);
    if (entry?.inFlight) {
      entry.endAfterMessage = true;
      return;
    }
    sessions.close(id, farewell);
  }

  return {
    name: 'relay',
    async start() {
      for (const { port, server, label } of servers) {
        await new Promise<void>((resolve, reject) => {
          server.server.once('error', reject);
          server.listen(port, () => {
            server.server.off('error', reject);
            logger.info({ port, tls: label }, 'SMTP relay listening');
            resolve();
          });
        });
      }
    },
    async stop() {
      stopping = true;
      // Stop accepting; sessions with a message in flight end once it is answered, idle ones now; what is
      // still open after closeTimeoutMs gets smtp-server's 421.
      const closed = servers.map(({ server }) => new Promise<void>((resolve) => server.close(() => resolve())));
      for (const id of sessions.openSessions()) endSession(id, RELAY_REPLIES.shuttingDown);
      await Promise.all(closed);
      await gateway.close();
    },
  };
}

/** A gateway answer for the log: its status and error name, never a key or the message. */
function describe(answer: GatewayAnswer): Record<string, unknown> {
  if (answer.kind === 'failed') return { failed: answer.reason };
  let name: unknown;
  try {
    name = (JSON.parse(answer.body) as { name?: unknown }).name;
  } catch {
    name = undefined;
  }
  return { status: answer.status, name };
}
