import pg from 'pg';
import type { Logger } from '../logger/logger.ts';
import { outageLog } from '../logger/outage-log.ts';
import { isDatabaseUnavailable } from './db.ts';

export type ChannelListener = {
  /** True while the LISTEN is in place: notifications sent now will arrive. */
  isListening(): boolean;
  /** Hangs up and waits for the loop to end. */
  stop(): Promise<void>;
};

export type ListenOptions = {
  databaseUrl: string;
  channel: string;
  logger: Logger;
  /** Shown in pg_stat_activity. */
  applicationName: string;
  onNotification: (payload: string | undefined) => void;
  /**
   * Called after every (re)connect, once the LISTEN is in place: whatever was announced while nobody
   * was listening has to be picked up here.
   */
  onListening?: () => void;
  /** Called when the connection is lost; notifications may be missed until `onListening` runs again. */
  onLost?: () => void;
  /** First reconnect delay, doubled per failure up to `maxRetryMs`. Default 250 ms, 5 s. */
  retryMs?: number;
  maxRetryMs?: number;
  /**
   * A `select 1` on the connection this often; one unanswered for as long counts the connection as lost.
   * A connection whose peer vanished without closing it (a network partition) would otherwise look alive
   * for many minutes while no notification can arrive. Default 10 s.
   */
  heartbeatMs?: number;
};

/**
 * Holds one dedicated LISTEN connection on a Postgres channel (a pooled connection cannot hold a LISTEN),
 * re-opened with capped backoff after errors and after a heartbeat goes unanswered. Callers keep a poll or a
 * bound of their own for the gaps, and refresh in `onListening` what the missed notifications announced.
 *
 * @example
 * const listener = listenChannel({ databaseUrl, channel: 'sender_outbox', logger, applicationName: 'relay',
 *   onNotification: () => wakeup.signal(), onListening: () => wakeup.signal() });
 */
export function listenChannel(opts: ListenOptions): ChannelListener {
  const log = opts.logger.child({ component: 'listen', channel: opts.channel });
  const retryMs = opts.retryMs ?? 250;
  const maxRetryMs = opts.maxRetryMs ?? 5_000;
  const heartbeatMs = opts.heartbeatMs ?? 10_000;
  let stopping = false;
  let listening = false;
  let client: pg.Client | undefined;
  let cancelPause: (() => void) | undefined;
  const outage = outageLog(opts.logger, 'PostgreSQL', opts.databaseUrl);

  async function listenOnce(): Promise<void> {
    const c = new pg.Client({
      connectionString: opts.databaseUrl,
      application_name: opts.applicationName,
      connectionTimeoutMillis: heartbeatMs,
      keepAlive: true,
    });
    client = c;
    let lost: (reason: unknown) => void = () => undefined;
    const ended = new Promise<unknown>((resolve) => {
      lost = resolve;
      c.once('error', resolve);
      c.once('end', resolve);
    });
    c.on('error', (err) => log.warn({ err: err.message }, 'listen connection error'));
    c.on('notification', (n) => opts.onNotification(n.payload));
    let heartbeat: NodeJS.Timeout | undefined;
    try {
      await c.connect();
      await c.query(`listen "${opts.channel}"`);
      listening = true;
      outage.recovered();
      opts.onListening?.();
      heartbeat = setInterval(() => {
        const unanswered = setTimeout(() => lost(new Error('heartbeat unanswered')), heartbeatMs);
        c.query('select 1').then(
          () => clearTimeout(unanswered),
          (err: unknown) => {
            clearTimeout(unanswered);
            lost(err);
          },
        );
      }, heartbeatMs);
      const reason = await ended;
      if (!stopping && reason instanceof Error && reason.message === 'heartbeat unanswered')
        log.warn('listen connection unresponsive; reconnecting');
    } finally {
      clearInterval(heartbeat);
      if (listening) {
        listening = false;
        opts.onLost?.();
      }
      await endClient(c);
    }
  }

  const loop = (async () => {
    let attempt = 0;
    while (!stopping) {
      try {
        await listenOnce();
        attempt = 0;
      } catch (err) {
        if (stopping) break;
        if (isDatabaseUnavailable(err)) outage.failed(err);
        else log.warn({ err }, 'listen failed');
      }
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(retryMs * 2 ** attempt++, maxRetryMs));
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
    isListening: () => listening,
    async stop() {
      stopping = true;
      cancelPause?.();
      if (client) await endClient(client);
      await loop;
    },
  };
}

/**
 * Closes the connection: politely, but an unresponsive peer would never answer the terminate, so the
 * socket is destroyed after a second.
 */
async function endClient(c: pg.Client): Promise<void> {
  const socket = (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
  const timer = setTimeout(() => socket?.destroy(), 1_000);
  await c.end().catch(() => undefined);
  clearTimeout(timer);
}
