import type SMTPConnection from 'nodemailer/lib/smtp-connection';
import { once, waitInLine } from '@postline/platform';

/** An open SMTP session to one destination (MX IP and port), between or during transactions. */
export type PooledSession = { conn: SMTPConnection; key: string; secure: boolean; messages: number };

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

type Destination = { active: number; waiters: (() => void)[]; idle: { session: PooledSession; timer: NodeJS.Timeout }[] };

export function createSessionPool(options: { maxPerDestination: number; maxMessagesPerSession: number; idleMs: number }): SessionPool {
  const destinations = new Map<string, Destination>();
  const open = new Set<PooledSession>();
  let closing = false;

  const destination = (key: string): Destination => {
    let found = destinations.get(key);
    if (!found) {
      found = { active: 0, waiters: [], idle: [] };
      destinations.set(key, found);
    }
    return found;
  };

  const forget = (key: string, dest: Destination) => {
    if (dest.active === 0 && dest.waiters.length === 0 && dest.idle.length === 0) destinations.delete(key);
  };

  const removeIdle = (session: PooledSession) => {
    const dest = destinations.get(session.key);
    if (!dest) return;
    const index = dest.idle.findIndex((entry) => entry.session === session);
    if (index < 0) return;
    clearTimeout(dest.idle[index]!.timer);
    dest.idle.splice(index, 1);
    forget(session.key, dest);
  };

  const quit = (session: PooledSession) => {
    removeIdle(session);
    if (!session.conn.destroyed) session.conn.quit();
  };

  return {
    acquire(key, timeoutMs) {
      const dest = destination(key);
      const release = () => {
        const next = dest.waiters.shift();
        if (next) next(); // the slot passes straight to the next waiter
        else {
          dest.active--;
          forget(key, dest);
        }
      };
      if (dest.active < options.maxPerDestination) {
        dest.active++;
        return Promise.resolve(once(release));
      }
      return waitInLine(dest.waiters, timeoutMs).then((granted) => (granted ? once(release) : undefined));
    },

    takeIdle(key, fits) {
      const dest = destinations.get(key);
      if (!dest) return undefined;
      while (dest.idle.length > 0) {
        const { session, timer } = dest.idle.pop()!; // most recently used first: least likely to be stale
        clearTimeout(timer);
        if (!session.conn.destroyed && fits(session)) return session;
        if (!session.conn.destroyed) session.conn.quit();
      }
      return undefined;
    },

    putIdle(session) {
      if (session.conn.destroyed) return;
      if (closing || session.messages >= options.maxMessagesPerSession) return quit(session);
      const timer = setTimeout(() => quit(session), options.idleMs);
      timer.unref();
      destination(session.key).idle.push({ session, timer });
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
      for (const dest of destinations.values()) for (const { session } of [...dest.idle]) quit(session);
      const deadline = Date.now() + graceMs;
      while (open.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const session of open) session.conn.close();
      open.clear();
    },
  };
}

