// The inbound MX (SMTP_MX_PORT; port 25 in production): smtp-server with the policy in its hooks. No AUTH
// (it takes mail only for our domains, so it is never a relay), STARTTLS offered, SIZE announced and
// enforced, a cap on recipients, idle and whole-session time limits, a cap on sessions per client address.
// A message is answered 250 only once everything it causes is committed (RFC 5321 §6.1: a 250 accepts responsibility).
import { domainToASCII } from 'node:url';
import { SMTPServer, type SMTPServerAddress, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { smtpReplyError, smtpReplyText, type Logger } from '@postline/platform';
import { domainIdOfLocalPart } from '../domain/dmarc-report-address.ts';
import { normalizeLineEndings } from '../domain/line-endings.ts';
import { routeRecipient, type RecipientRoute } from '../domain/recipient-routing.ts';
import type { InboundMetrics } from '../metrics.ts';
import type { IncomingMessage, Received } from '../use-cases/receive-message.ts';
import type { DomainLookup } from './mx-domains.ts';
import type { TlsCredentials } from '../tls/tls.ts';
import { MX_REPLIES } from './mx-replies.ts';
import { readMessage } from './read-message.ts';
import { createSessionGuard, type OpenConnection } from './session-guard.ts';

export type MxLimits = {
  /** The largest message taken, in bytes (announced with SIZE; 552 5.3.4 past it). */
  maxMessageBytes: number;
  /** Recipients per transaction (452 4.5.3 past it; RFC 5321 asks servers to take at least 100, 50 is our API's cap). */
  maxRecipients: number;
  /** A session whose client says nothing for this long is closed (421). */
  idleTimeoutMs: number;
  /** A session is closed after this long whatever it does (a client trickling bytes holds nothing forever). */
  sessionTimeoutMs: number;
  /** Sessions open at once from one client address (more: 421 4.7.0 at connect). */
  maxSessionsPerIp: number;
  /** How long stop() lets open sessions finish before closing them (421). */
  closeTimeoutMs: number;
};

export const DEFAULT_MX_LIMITS: MxLimits = {
  maxMessageBytes: 40 * 1024 * 1024,
  maxRecipients: 50,
  idleTimeoutMs: 60_000,
  sessionTimeoutMs: 10 * 60_000,
  maxSessionsPerIp: 20,
  closeTimeoutMs: 5_000,
};

export type MxServerDeps = {
  port: number;
  /** INBOUND_MX_HOST: named in the greeting and in our replies. */
  hostName: string;
  tls: TlsCredentials;
  /** The live domains named by a host or whose return path it is (cached: see mx-domains.ts). */
  domains: DomainLookup;
  /** The live domain of an id (a DMARC report address names it), or undefined. */
  reportDomain: (domainId: string) => Promise<{ team_id: string; name: string } | undefined>;
  receive: (message: IncomingMessage) => Promise<Received>;
  metrics: InboundMetrics;
  logger: Logger;
  limits?: Partial<MxLimits>;
  now?: () => Date;
};

export function createMxServer(deps: MxServerDeps): {
  name: string;
  start: () => Promise<void>;
  stop: () => Promise<void>;
} {
  const limits = { ...DEFAULT_MX_LIMITS, ...deps.limits };
  const now = deps.now ?? (() => new Date());
  const { logger, metrics } = deps;
  const sessions = createSessionGuard({
    listener: 'mx',
    maxSessionsPerIp: limits.maxSessionsPerIp,
    sessionTimeoutMs: limits.sessionTimeoutMs,
    // Cut at once, even mid-message: the sender keeps what was not answered 250 and retries it.
    onTimeLimit: (id) => {
      logger.info({ session: id }, 'MX session closed: whole-session time limit');
      sessions.close(id, MX_REPLIES.sessionTooLong);
    },
    tooManySessions: MX_REPLIES.tooManySessions,
    connections: () => server.connections as Set<OpenConnection>,
    initialState: () => undefined,
    metrics,
    logger,
  });
  /** Where each RCPT of a transaction goes, decided at RCPT (an address object lives as long as its transaction). */
  const routes = new WeakMap<SMTPServerAddress, RecipientRoute>();
  const mxHost = domainToASCII(deps.hostName.toLowerCase());

  const options: SMTPServerOptions = {
    name: deps.hostName,
    key: deps.tls.key,
    cert: deps.tls.cert,
    disabledCommands: ['AUTH'],
    // Off: smtp-server's automatic codes follow the reply code only (550 → 5.1.1 whatever the cause); every
    // reply of ours carries the code the platform's policy gives it (see mx-replies.ts), the recipient cap
    // and the size limit included, which the hooks below enforce for that reason.
    hideENHANCEDSTATUSCODES: true,
    authOptional: true,
    size: limits.maxMessageBytes,
    socketTimeout: limits.idleTimeoutMs,
    closeTimeout: limits.closeTimeoutMs,
    // The client's address is what we log and check; a PTR lookup per connection would only slow the greeting.
    disableReverseLookup: true,
    logger: false,
    onConnect(session, callback) {
      const refusal = sessions.admit(session);
      callback(refusal && smtpReplyError(refusal));
    },
    onClose(session) {
      sessions.release(session.id);
    },
    onRcptTo(address, session, callback) {
      // The cap smtp-server's maxRecipients would enforce: a repeated address replaces its earlier entry.
      const rcptTo = session.envelope.rcptTo;
      const known = rcptTo.some((r) => r.address.toLowerCase() === address.address.toLowerCase());
      if (!known && rcptTo.length >= limits.maxRecipients) {
        return void setImmediate(() => callback(smtpReplyError(MX_REPLIES.tooManyRecipients())));
      }
      routeOf(address).then(
        (route) => {
          if (route.kind !== 'refused') {
            routes.set(address, route);
            return callback();
          }
          const host = hostOf(address.address);
          const refusal =
            route.reason === 'not-receiving'
              ? MX_REPLIES.notReceiving
              : route.reason === 'not-a-return-path-mailbox'
                ? MX_REPLIES.noSuchMailbox
                : route.reason === 'not-a-report-address'
                  ? MX_REPLIES.noSuchReportAddress
                  : MX_REPLIES.noSuchDomain;
          callback(
            smtpReplyError(
              host ? refusal(address.address, host, deps.hostName) : MX_REPLIES.badAddress(address.address),
            ),
          );
        },
        (err: unknown) => {
          logger.error({ err }, 'MX recipient lookup failed');
          callback(smtpReplyError(MX_REPLIES.lookupFailed));
        },
      );
    },
    onData(stream, session, callback) {
      readMessage(stream).then(
        (raw) => {
          if (!raw) {
            metrics.messages.inc({ listener: 'mx', outcome: 'rejected' });
            return callback(smtpReplyError(MX_REPLIES.tooLarge(limits.maxMessageBytes)));
          }
          store(raw, session).then(
            (id) => {
              metrics.messages.inc({ listener: 'mx', outcome: 'accepted' });
              callback(null, smtpReplyText(MX_REPLIES.accepted(id)));
            },
            (err: unknown) => {
              logger.error({ err, ip: session.remoteAddress }, 'MX could not store a message: answered 451');
              metrics.messages.inc({ listener: 'mx', outcome: 'deferred' });
              callback(smtpReplyError(MX_REPLIES.storeFailed));
            },
          );
        },
        // The client went away mid-message (or the session limit cut it): nobody is left to answer.
        () => callback(smtpReplyError(MX_REPLIES.notReceived)),
      );
    },
  };
  const server = new SMTPServer(options);
  server.on('error', (err) => logger.warn({ err }, 'MX connection error'));

  async function routeOf(address: SMTPServerAddress): Promise<RecipientRoute> {
    const at = address.address.lastIndexOf('@');
    if (at <= 0) return { kind: 'refused', reason: 'unknown' };
    const host = domainToASCII(address.address.slice(at + 1).toLowerCase());
    if (!host) return { kind: 'refused', reason: 'unknown' };
    const local = address.address.slice(0, at);
    if (host === mxHost) {
      // Our own host takes DMARC aggregate reports only, each at its domain's address.
      const domainId = domainIdOfLocalPart(local);
      const domain = domainId === undefined ? undefined : await deps.reportDomain(domainId);
      if (!domain || domainId === undefined) {
        metrics.dmarcReports.inc({ outcome: 'unknown_address' });
        return { kind: 'refused', reason: 'not-a-report-address' };
      }
      return { kind: 'dmarc-report', teamId: domain.team_id, domainId, domainName: domain.name };
    }
    return routeRecipient(local, host, await deps.domains(host));
  }

  /** Records the message; the id of its (first) received email, if it became one. */
  async function store(received: Buffer, session: SMTPServerSession): Promise<string | undefined> {
    const byTeam = new Map<string, string[]>();
    const returnPath: IncomingMessage['returnPath'] = [];
    const dmarcReports = new Map<string, IncomingMessage['dmarcReports'][number]>();
    for (const address of session.envelope.rcptTo) {
      const route = routes.get(address);
      if (route?.kind === 'received') byTeam.set(route.teamId, [...(byTeam.get(route.teamId) ?? []), address.address]);
      else if (route?.kind === 'return-path')
        returnPath.push({ address: address.address, teamId: route.teamId, returnPath: route.returnPath });
      else if (route?.kind === 'dmarc-report')
        dmarcReports.set(route.domainId, {
          teamId: route.teamId,
          domainId: route.domainId,
          domainName: route.domainName,
        });
    }
    const mailFrom = session.envelope.mailFrom;
    const result = await deps.receive({
      raw: normalizeLineEndings(received),
      session: {
        ip: session.remoteAddress,
        helo: session.hostNameAppearsAs ?? '',
        mailFrom: mailFrom ? mailFrom.address : '',
      },
      received: [...byTeam].map(([teamId, addresses]) => ({ teamId, addresses })),
      returnPath,
      dmarcReports: [...dmarcReports.values()],
      receivedAt: now(),
    });
    for (const outcome of result.returnPathOutcomes) metrics.returnPathMail.inc({ outcome });
    for (const outcome of result.dmarcOutcomes) metrics.dmarcReports.inc({ outcome });
    return result.emailIds[0];
  }

  return {
    name: 'mx',
    start: () =>
      new Promise<void>((resolve, reject) => {
        server.server.once('error', reject);
        server.listen(deps.port, () => {
          server.server.off('error', reject);
          logger.info({ port: deps.port, host: deps.hostName }, 'MX listening');
          resolve();
        });
      }),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function hostOf(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  return at > 0 ? address.slice(at + 1) : undefined;
}
