// Opening an SMTP session to one MX address: dial, check the peer, greet, EHLO and STARTTLS.
import net from 'node:net';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { AddressCheck, Logger } from '@postline/platform';
import { failureOf, LOCAL_REPLIES, localReply, type AddressFailure, type SmtpError } from './replies.ts';
import type { PooledSession, SessionPool } from './session-pool.ts';
import { sessionTls, transcriptLogger, type Transcript, type TranscriptSink } from './transcript.ts';

export type SessionSettings = {
  port: number;
  heloName: string;
  connectTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
  /** The address policy a peer must pass (checkTargetAddress). */
  allowed: (ip: string) => AddressCheck;
  /** Counts each session opened (SessionPool.track). */
  pool: Pick<SessionPool, 'track'>;
  /** Told the local address of each connection made: the address this process sends from. */
  onLocalAddress?: (ip: string) => void;
  logger?: Logger;
};

export type SessionOpener = (
  mx: string,
  ip: string,
  key: string,
  requireTls: boolean,
  transcript: Transcript,
) => Promise<PooledSession | { failure: AddressFailure }>;

/** Opens sessions with `settings`; a session that opens is tracked by the pool under `key`. */
export function createSessionOpener(settings: SessionSettings): SessionOpener {
  return openSession;

  /**
   * Dials, checks the peer, and runs greeting, EHLO and STARTTLS (plaintext again if the handshake fails),
   * writing what happens into `transcript`.
   */
  async function openSession(
    mx: string,
    ip: string,
    key: string,
    requireTls: boolean,
    transcript: Transcript,
  ): Promise<PooledSession | { failure: AddressFailure }> {
    const modes = requireTls ? (['required'] as const) : (['opportunistic', 'none'] as const);
    let failure: AddressFailure | undefined;
    for (const mode of modes) {
      let socket: net.Socket;
      transcript.add(`* connecting to ${ip} port ${settings.port}${mode === 'none' ? ' (plaintext)' : ''}`);
      try {
        socket = await dial(ip, settings.port, settings.connectTimeoutMs);
      } catch (error) {
        transcript.add(`* ${(error as Error).message}`);
        return {
          failure: {
            mx: null,
            ...localReply(
              LOCAL_REPLIES.noAnswer,
              `${ip}:${settings.port} ${(error as SmtpError).code ?? (error as Error).message}`,
            ),
          },
        };
      }
      // Defence in depth: the address we reached, not only the one we meant to reach.
      const peer = settings.allowed(socket.remoteAddress ?? '');
      if (!peer.ok) {
        socket.destroy();
        transcript.add(`* connected to a refused address ${socket.remoteAddress ?? '?'}: closed`);
        return {
          failure: {
            mx: null,
            ...localReply(
              LOCAL_REPLIES.noAnswer,
              `connected to a refused address ${socket.remoteAddress ?? '?'} (${peer.reason})`,
            ),
          },
        };
      }
      if (socket.localAddress) settings.onLocalAddress?.(socket.localAddress);
      const sink: TranscriptSink = { current: transcript };
      const shaken = await handshake(socket, mx, ip, mode, sink);
      if ('conn' in shaken) {
        const tls = sessionTls(shaken.conn);
        if (tls) transcript.add(`* TLS ${tls.version} ${tls.cipher}`);
        const session: PooledSession = {
          conn: shaken.conn,
          key,
          secure: shaken.conn.secure,
          tls,
          messages: 0,
          sink,
        };
        settings.pool.track(session);
        return session;
      }
      sink.current = undefined;
      transcript.add(`* ${shaken.tls ? 'TLS failed: ' : ''}${shaken.error.message}`);
      failure = failureOf(shaken.error, mx, shaken.tls);
      // Opportunistic TLS: a failed handshake (often a certificate or protocol mismatch) is retried in plaintext.
      if (shaken.tls && mode === 'opportunistic') continue;
      return { failure };
    }
    return { failure: failure ?? { mx: null, ...localReply(LOCAL_REPLIES.noAnswer) } };
  }

  /** Greeting, EHLO and STARTTLS; `tls` tells a failed STARTTLS (refused, or a handshake that broke) apart. */
  function handshake(
    socket: net.Socket,
    mx: string,
    ip: string,
    mode: 'required' | 'opportunistic' | 'none',
    sink: TranscriptSink,
  ): Promise<{ conn: SMTPConnection } | { error: SmtpError; tls: boolean }> {
    const conn = new SMTPConnection({
      connection: socket,
      host: ip,
      port: settings.port,
      servername: mx,
      name: settings.heloName,
      ignoreTLS: mode === 'none',
      requireTLS: mode === 'required',
      opportunisticTLS: mode === 'opportunistic',
      // No MTA-STS yet: opportunistic TLS does not verify certificates (RFC 7435; Postfix's `may`).
      tls: { rejectUnauthorized: false, servername: mx },
      // Covers greeting, EHLO and STARTTLS; the greeting alone gets greetingTimeout.
      connectionTimeout: 2 * settings.greetingTimeoutMs,
      greetingTimeout: settings.greetingTimeoutMs,
      socketTimeout: settings.socketTimeoutMs,
      socketCloseTimeout: 1000,
      // Commands and replies, never the message, into the transcript of the transaction the session serves.
      transactionLog: true,
      logger: transcriptLogger(sink),
    });
    // Always listened to: nodemailer emits 'error' for idle sessions too, and an unheard one would throw.
    conn.on('error', (error: SmtpError) => settings.logger?.debug({ err: error, mx, ip }, 'SMTP session error'));
    return new Promise((resolve) => {
      // A broken TLS handshake surfaces as a socket error (ESOCKET) while `upgrading`, a refused STARTTLS as ETLS.
      const fail = (error: SmtpError) => resolve({ error, tls: error.code === 'ETLS' || conn.upgrading === true });
      conn.once('error', fail);
      conn.once('end', () =>
        fail(Object.assign(new Error(`${ip} closed the connection during the handshake`), { code: 'ECONNECTION' })),
      );
      conn.connect((error) => (error ? fail(error) : resolve({ conn })));
    });
  }
}

function dial(ip: string, port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: ip, port });
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(Object.assign(new Error(`connect to ${ip}:${port} timed out`), { code: 'ETIMEDOUT' })),
      timeoutMs,
    );
    socket.once('error', fail);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', fail);
      resolve(socket);
    });
  });
}
