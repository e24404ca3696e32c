// The guard both listeners (the MX and the relay) put around their sessions: a cap on the sessions open at
// once from one client address, a whole-session time limit, the sessions gauge, and closing a session with
// a last reply. smtp-server has no such cap and only an idle timeout, so a client trickling bytes, or many
// sessions from one address, would otherwise hold the listener.
import { smtpReplyText, type Logger, type SmtpReply } from '@postline/platform';
import type { InboundMetrics } from '../metrics.ts';

/** The part of an smtp-server connection (its public `connections` set) a session is closed with. */
export type OpenConnection = { id: string; send: (code: number, text: string) => void; close: () => void };

export type SessionGuardOptions<State> = {
  /** The `listener` label of the sessions gauge, and how logs name the listener. */
  listener: 'mx' | 'relay';
  /** Sessions open at once from one client address (more are refused at connect). */
  maxSessionsPerIp: number;
  /** How long a session may last whatever it does. */
  sessionTimeoutMs: number;
  /** What happens to a session past its time limit (close it now, or after its message in flight). */
  onTimeLimit: (sessionId: string) => void;
  /** The refusal at connect past `maxSessionsPerIp` (421 4.7.0). */
  tooManySessions: (ip: string, max: number) => SmtpReply;
  /** The connections of the listener's servers (read when a session is closed). */
  connections: () => Iterable<OpenConnection>;
  /** The listener's own state of a session, made when it is admitted. */
  initialState: () => State;
  metrics: InboundMetrics;
  logger: Logger;
};

export type SessionGuard<State> = {
  /** At connect: counts the session and starts its time limit, or answers the refusal (not counted). */
  admit: (session: { id: string; remoteAddress: string }) => SmtpReply | undefined;
  /** At close: forgets an admitted session (a refused one was never counted). */
  release: (sessionId: string) => void;
  /** The listener's state of an admitted session still open. */
  state: (sessionId: string) => State | undefined;
  /** The ids of the admitted sessions open now. */
  openSessions: () => string[];
  /** Sends `farewell` (if given) on the session's connection and closes it. */
  close: (sessionId: string, farewell?: SmtpReply) => void;
};

export function createSessionGuard<State>(opts: SessionGuardOptions<State>): SessionGuard<State> {
  const openByIp = new Map<string, number>();
  const sessions = new Map<string, { ip: string; timer: NodeJS.Timeout; state: State }>();
  const { listener, metrics, logger } = opts;

  return {
    admit({ id, remoteAddress: ip }) {
      const open = openByIp.get(ip) ?? 0;
      if (open >= opts.maxSessionsPerIp) {
        logger.info({ ip, open }, `${listener === 'mx' ? 'MX' : 'relay'} session refused: too many from this address`);
        return opts.tooManySessions(ip, opts.maxSessionsPerIp);
      }
      openByIp.set(ip, open + 1);
      const timer = setTimeout(() => opts.onTimeLimit(id), opts.sessionTimeoutMs).unref();
      sessions.set(id, { ip, timer, state: opts.initialState() });
      metrics.sessions.inc({ listener });
      return undefined;
    },
    release(id) {
      const entry = sessions.get(id);
      if (!entry) return;
      sessions.delete(id);
      clearTimeout(entry.timer);
      const left = (openByIp.get(entry.ip) ?? 1) - 1;
      if (left > 0) openByIp.set(entry.ip, left);
      else openByIp.delete(entry.ip);
      metrics.sessions.dec({ listener });
    },
    state: (id) => sessions.get(id)?.state,
    openSessions: () => [...sessions.keys()],
    close(id, farewell) {
      for (const connection of opts.connections()) {
        if (connection.id !== id) continue;
        if (farewell) connection.send(farewell.code, smtpReplyText(farewell));
        connection.close();
      }
    },
  };
}
