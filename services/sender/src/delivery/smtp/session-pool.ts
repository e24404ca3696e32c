import type SMTPConnection from 'nodemailer/lib/smtp-connection';
import { createKeyedSlots } from '@postline/platform';
import type { SessionTls, TranscriptSink } from './transcript.ts';

/**
 * An open SMTP session to one destination (MX IP and port), between or during transactions: its traffic
 * goes to the transcript of the transaction it serves (`sink`).
 */
export type PooledSession = {
  conn: SMTPConnection;
  key: string;
  secure: boolean;
  tls: SessionTls | null;
  messages: number;
  /** Messages this session may carry, when lower than the pool's limit (the provider's shaping). */
  maxMessages?: number;
  sink: TranscriptSink;
};

export type SessionPool = {
  /**
   * Waits for one of the destination's `maxPerDestination` transaction slots (FIFO) and returns its
   * release, or undefined when none came free within `timeoutMs`. A new session may only be opened while
   * holding a slot and when no idle one fits, so a destination never has more than `maxPerDestination`
   * sessions open.
   */
  acquire: (key: string, timeoutMs?: number) => Promise<(() => void) | undefined>;
  /** An idle session for the destination that `fits`; idle ones that do not fit are closed. */
  takeIdle: (key: string, fits: (session: PooledSession) => boolean) => PooledSession | undefined;
  /** Keeps a session that finished a transaction cleanly for `idleMs`, or closes it if it is used up. */
  putIdle: (session: PooledSession) => void;
  /** Counts a session as open (for close()) until it ends. */
  track: (session: PooledSession) => void;
  /** Quits every idle session (and each busy one once its transaction ends), destroying what is left after `graceMs`. */
  close: (graceMs: number) => Promise<void>;
};

type IdleSession = { session: PooledSession; timer: NodeJS.Timeout };

export function createSessionPool(options: {
  maxPerDestination: number;
  maxMessagesPerSession: number;
  idleMs: number;
}): SessionPool {
  const slots = createKeyedSlots(options.maxPerDestination);
  /** Idle sessions by destination, most recently used last; a destination without any is not listed. */
  const idle = new Map<string, IdleSession[]>();
  const open = new Set<PooledSession>();
  let closing = false;

  const removeIdle = (session: PooledSession) => {
    const sessions = idle.get(session.key);
    if (!sessions) return;
    const index = sessions.findIndex((entry) => entry.session === session);
    if (index < 0) return;
    clearTimeout(sessions[index]!.timer);
    sessions.splice(index, 1);
    if (sessions.length === 0) idle.delete(session.key);
  };

  const quit = (session: PooledSession) => {
    removeIdle(session);
    if (!session.conn.destroyed) session.conn.quit();
  };

  return {
    acquire: (key, timeoutMs) => slots.acquire(key, { timeoutMs }),

    takeIdle(key, fits) {
      const sessions = idle.get(key);
      if (!sessions) return undefined;
      try {
        while (sessions.length > 0) {
          const { session, timer } = sessions.pop()!; // most recently used first: least likely to be stale
          clearTimeout(timer);
          if (!session.conn.destroyed && fits(session)) return session;
          if (!session.conn.destroyed) session.conn.quit();
        }
        return undefined;
      } finally {
        if (sessions.length === 0) idle.delete(key);
      }
    },

    putIdle(session) {
      session.sink.current = undefined;
      if (session.conn.destroyed) return;
      const max = Math.min(options.maxMessagesPerSession, session.maxMessages ?? Infinity);
      if (closing || session.messages >= max) return quit(session);
      const timer = setTimeout(() => quit(session), options.idleMs);
      timer.unref();
      let sessions = idle.get(session.key);
      if (!sessions) {
        sessions = [];
        idle.set(session.key, sessions);
      }
      sessions.push({ session, timer });
    },

    track(session) {
      open.add(session);
      session.conn.once('end', () => {
        open.delete(session);
        removeIdle(session);
      });
    },

    async close(graceMs) {
      closing = true;
      for (const sessions of idle.values()) for (const { session } of [...sessions]) quit(session);
      const deadline = Date.now() + graceMs;
      while (open.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const session of open) session.conn.close();
      open.clear();
    },
  };
}
