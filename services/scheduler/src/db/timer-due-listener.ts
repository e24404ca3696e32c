import { createDb, type Logger } from '@postline/platform';
import { timerDueChannel } from './timers.ts';

export type TimerDueListener = { stop(): Promise<void> };

/**
 * Holds one LISTEN connection on the schema's timer channel and calls `onDue` for each notification
 * (`notifyTimerDue`, sent at the commit of a set due soon) and after every (re)connect, since timers may
 * have been stored while it was not listening. Reconnects with capped backoff; the firing loop's poll
 * covers the gaps.
 */
export function listenForTimerDue(opts: {
  databaseUrl: string;
  schema: string;
  logger: Logger;
  onDue: () => void;
}): TimerDueListener {
  const log = opts.logger.child({ component: 'timer-due-listener' });
  // A pool of one: a pooled connection that is never released can hold the LISTEN.
  const { pool } = createDb<unknown>({
    url: opts.databaseUrl,
    schema: opts.schema,
    max: 1,
    applicationName: 'scheduler-listen',
  });
  const channel = timerDueChannel(opts.schema);
  let stopping = false;
  let hangUp: (() => void) | undefined;
  let cancelPause: (() => void) | undefined;

  async function listenOnce(): Promise<void> {
    const client = await pool.connect();
    let released = false;
    const release = (err?: Error) => {
      if (released) return;
      released = true;
      client.release(err ?? true);
    };
    try {
      const ended = new Promise<void>((resolve) => {
        client.once('end', () => resolve());
        client.on('error', (err) => {
          log.warn({ err }, 'timer listen connection error');
          resolve();
        });
        hangUp = () => resolve();
      });
      client.on('notification', () => opts.onDue());
      await client.query(`listen "${channel}"`);
      opts.onDue();
      await ended;
    } finally {
      hangUp = undefined;
      release();
    }
  }

  const loop = (async () => {
    let attempt = 0;
    while (!stopping) {
      try {
        await listenOnce();
        attempt = 0;
      } catch (err) {
        if (!stopping) log.warn({ err }, 'timer listen failed');
      }
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(250 * 2 ** attempt++, 10_000));
        function done() {
          clearTimeout(timer);
          cancelPause = undefined;
          resolve();
        }
        cancelPause = done;
      });
    }
  })();

  return {
    async stop() {
      stopping = true;
      hangUp?.();
      cancelPause?.();
      await loop;
      await pool.end();
    },
  };
}
