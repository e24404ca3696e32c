import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import type { Logger } from '../logger/logger.ts';
import type { Metrics } from '../http/metrics.ts';
import { outageLog } from '../logger/outage-log.ts';
import { queueDepth } from './dead-letters.ts';
import { BrokerUnavailableError } from './errors.ts';
import { brokerMetrics, type BrokerMetrics } from './metrics.ts';
import { declareExchanges, exchangeNames, type ExchangeNames } from './topology.ts';

export type BrokerOptions = {
  url: string;
  /** BROKER_PREFIX: every exchange and queue name starts with it, so deployments and tests never collide. */
  prefix: string;
  logger: Logger;
  /** The service's metrics from `createMetrics`; consumers and relays on this broker report there too. */
  metrics?: Pick<Metrics, 'registry'>;
  /** Shown in the RabbitMQ management UI. */
  connectionName?: string;
  /**
   * Reconnect backoff doubles from `minMs` up to `maxMs` (with jitter). Defaults 200 ms and 2 s: a service is
   * back within about 2 s of the broker's return, and a connect attempt every 2 s costs the broker nothing.
   */
  reconnect?: { minMs?: number; maxMs?: number };
  /** A publish not confirmed within this time counts as failed (the outbox keeps the row). Default 10 s. */
  publishTimeoutMs?: number;
  connectTimeoutMs?: number;
  heartbeatSeconds?: number;
};

export type PublishOptions = {
  /** Becomes the AMQP message-id; consumers deduplicate on the envelope id, which is the same value. */
  messageId: string;
  type?: string;
  headers?: Record<string, unknown>;
};

/**
 * `returned`: mandatory and no queue bound (for events: nobody subscribed). The other failures mean the
 * broker did not take responsibility; publish again later.
 */
export type PublishResult =
  | { ok: true }
  | { ok: false; reason: 'disconnected' | 'closed' | 'nacked' | 'returned' | 'timeout' };

/** Runs on every new connection (declare queues, start consuming); a failure drops and retries the connection. */
export type Setup = (connection: ChannelModel) => Promise<void>;

export type Broker = {
  readonly prefix: string;
  readonly exchanges: ExchangeNames;
  readonly logger: Logger;
  readonly metrics: BrokerMetrics | undefined;
  /** Connects (retrying with backoff until `stop`) and resolves once the first connection is up. */
  start(): Promise<void>;
  /** Closes the connection within `timeoutMs` (default 5 s); unacked deliveries go back to their queues. */
  stop(timeoutMs?: number): Promise<void>;
  /** For /readyz. */
  isConnected(): boolean;
  /** Persistent, mandatory publish on the confirm channel; resolves once the broker acked (or failed). */
  publish(exchange: string, routingKey: string, content: Buffer, options: PublishOptions): Promise<PublishResult>;
  /** Runs `setup` now when connected and again after each reconnect; returns the function that removes it. */
  addSetup(setup: Setup): Promise<() => void>;
  /** A short-lived channel for admin work (checkQueue, get); throws BrokerUnavailableError when disconnected. */
  withChannel<T>(fn: (ch: Channel) => Promise<T>): Promise<T>;
};

type Live = {
  model: ChannelModel;
  confirm: ConfirmChannel;
  closed: boolean;
  whenClosed: Promise<void>;
  /** Message ids returned as unroutable; the broker sends basic.return before the matching ack. */
  returned: Map<string, number>;
  /** Set while the socket buffer is full: publishes wait for 'drain'. */
  drained: Promise<void> | undefined;
  /** Setups already run on this connection. */
  ran: Set<Setup>;
};

/**
 * The one RabbitMQ connection of a process. amqplib does not reconnect, so this does: capped exponential
 * backoff, then the exchanges and every registered setup (consumers) are declared again.
 *
 * @example
 * const broker = createBroker({ url: config.amqpUrl, prefix: config.brokerPrefix, logger, metrics });
 * await broker.start();
 * lifecycle.add({ name: 'broker', stop: () => broker.stop() });
 */
export function createBroker(opts: BrokerOptions): Broker {
  const logger = opts.logger;
  const exchanges = exchangeNames(opts.prefix);
  const metrics = opts.metrics ? brokerMetrics(opts.metrics.registry) : undefined;
  const minMs = opts.reconnect?.minMs ?? 200;
  const maxMs = opts.reconnect?.maxMs ?? 2_000;
  const publishTimeoutMs = opts.publishTimeoutMs ?? 10_000;
  const url = new URL(opts.url);
  if (!url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(opts.heartbeatSeconds ?? 10));

  const outage = outageLog(logger, 'RabbitMQ', opts.url);
  const setups = new Set<Setup>();
  let live: Live | undefined;
  let stopping = false;
  let running: Promise<void> | undefined;
  let cancelSleep: (() => void) | undefined;
  let firstConnected: () => void = () => undefined;
  const connectedOnce = new Promise<void>((resolve) => (firstConnected = resolve));

  async function connectOnce(): Promise<Live> {
    const model = await amqp.connect(url.toString(), {
      timeout: opts.connectTimeoutMs ?? 5_000,
      clientProperties: { connection_name: opts.connectionName ?? opts.prefix },
    });
    coalesceFrames(model);
    // 'error' is always followed by 'close'; without a listener it would crash the process.
    model.on('error', (err: unknown) => logger.warn({ err }, 'broker connection error'));
    model.on('blocked', (reason: unknown) => logger.warn({ reason }, 'broker blocked publishing (resource alarm)'));
    model.on('unblocked', () => logger.info('broker unblocked publishing'));
    const whenClosed = new Promise<void>((resolve) => model.once('close', () => resolve()));
    try {
      const confirm = await model.createConfirmChannel();
      const state: Live = {
        model,
        confirm,
        closed: false,
        whenClosed,
        returned: new Map(),
        drained: undefined,
        ran: new Set(),
      };
      void whenClosed.then(() => (state.closed = true));
      // Before amqplib's own 'close' listener fails the pending confirms, so those see `closed`.
      confirm.prependListener('close', () => {
        state.closed = true;
        // The server closed our publishing channel (e.g. an exchange was deleted): start over cleanly.
        if (!stopping) model.close().catch(() => undefined);
      });
      confirm.on('error', (err: unknown) => logger.warn({ err }, 'broker publish channel error'));
      confirm.on('return', (msg: Message) => {
        const id = String(msg.properties.messageId);
        state.returned.set(id, (state.returned.get(id) ?? 0) + 1);
      });
      await declareExchanges(confirm, exchanges);
      // Setups added while this loop runs are picked up by the next pass; `live` is set in the same turn
      // as the final check, so `addSetup` either sees this connection or is seen by this loop.
      for (;;) {
        const pending = [...setups].filter((s) => !state.ran.has(s));
        if (pending.length === 0) break;
        for (const setup of pending) {
          state.ran.add(setup);
          await setup(model);
        }
      }
      if (state.closed) throw new BrokerUnavailableError('connection closed during setup');
      live = state;
      return state;
    } catch (err) {
      await model.close().catch(() => undefined);
      throw err;
    }
  }

  async function run(): Promise<void> {
    let attempt = 0;
    while (!stopping) {
      let state: Live;
      try {
        state = await connectOnce();
      } catch (err) {
        if (stopping) break;
        const delay = backoff(attempt++);
        outage.failed(err);
        await sleep(delay);
        continue;
      }
      if (stopping) {
        live = undefined;
        await state.model.close().catch(() => undefined);
        break;
      }
      attempt = 0;
      outage.recovered();
      logger.info({ prefix: opts.prefix }, 'broker connected');
      firstConnected();
      await state.whenClosed;
      if (live === state) live = undefined;
      if (!stopping) logger.warn('broker connection lost; reconnecting');
    }
    firstConnected();
  }

  function backoff(attempt: number): number {
    const cap = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 20));
    return Math.round(cap / 2 + (Math.random() * cap) / 2);
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        cancelSleep = undefined;
        resolve();
      }
      cancelSleep = done;
    });
  }

  async function withChannel<T>(fn: (ch: Channel) => Promise<T>): Promise<T> {
    const state = live;
    if (!state) throw new BrokerUnavailableError();
    const ch = await state.model.createChannel();
    // A server-side channel error (404 from checkQueue) rejects the pending call; the event is noise.
    ch.on('error', () => undefined);
    try {
      return await fn(ch);
    } finally {
      await ch.close().catch(() => undefined);
    }
  }

  async function publishOn(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: PublishOptions,
  ): Promise<PublishResult> {
    const state = live;
    if (!state || state.closed) return { ok: false, reason: 'disconnected' };
    while (state.drained) await state.drained;
    if (state.closed) return { ok: false, reason: 'closed' };
    return new Promise<PublishResult>((resolve) => {
      let settled = false;
      const finish = (result: PublishResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const timer = setTimeout(() => finish({ ok: false, reason: 'timeout' }), publishTimeoutMs);
      const onConfirm = (err: unknown) => {
        if (err) return finish({ ok: false, reason: state.closed ? 'closed' : 'nacked' });
        const returns = state.returned.get(options.messageId) ?? 0;
        if (returns === 0) return finish({ ok: true });
        if (returns === 1) state.returned.delete(options.messageId);
        else state.returned.set(options.messageId, returns - 1);
        return finish({ ok: false, reason: 'returned' });
      };
      try {
        const flushed = state.confirm.publish(
          exchange,
          routingKey,
          content,
          {
            persistent: true,
            mandatory: true,
            contentType: 'application/json',
            messageId: options.messageId,
            type: options.type,
            headers: options.headers,
            timestamp: Math.floor(Date.now() / 1000),
          },
          onConfirm,
        );
        // amqplib buffered the message anyway; `false` means slow down until the socket drains.
        if (!flushed && !state.drained) {
          state.drained = new Promise<void>((resolve) => {
            const done = () => {
              state.drained = undefined;
              resolve();
            };
            state.confirm.once('drain', done);
            void state.whenClosed.then(done);
          });
        }
      } catch {
        // amqplib throws synchronously when the channel is already closing.
        finish({ ok: false, reason: 'closed' });
      }
    });
  }

  function exchangeLabel(exchange: string): string {
    if (exchange === exchanges.events) return 'events';
    if (exchange === exchanges.commands) return 'commands';
    return exchange === '' ? 'default' : 'other';
  }

  const broker: Broker = {
    prefix: opts.prefix,
    exchanges,
    logger,
    metrics,
    async start() {
      running ??= run();
      await connectedOnce;
    },
    async stop(timeoutMs = 5_000) {
      stopping = true;
      cancelSleep?.();
      const state = live;
      live = undefined;
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      try {
        if (state) {
          const closed = await Promise.race([state.model.close().catch(() => undefined), deadline]);
          if (closed === 'timeout') destroySocket(state.model);
        }
        if (running) await Promise.race([running, deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
    isConnected: () => live !== undefined && !live.closed,
    async publish(exchange, routingKey, content, options) {
      const result = await publishOn(exchange, routingKey, content, options);
      metrics?.published.inc({ exchange: exchangeLabel(exchange), result: result.ok ? 'ok' : result.reason });
      return result;
    },
    async addSetup(setup) {
      setups.add(setup);
      const state = live;
      if (state && !state.closed) {
        state.ran.add(setup);
        try {
          await setup(state.model);
        } catch (err) {
          setups.delete(setup);
          throw err;
        }
      }
      return () => {
        setups.delete(setup);
      };
    },
    withChannel,
  };
  metrics?.watchQueue({
    queue: exchanges.unroutable,
    kind: 'unroutable',
    depth: () => queueDepth(broker, exchanges.unroutable),
  });
  return broker;
}

/** Last resort when the server does not answer connection.close (network gone): drop the socket. */
function destroySocket(model: ChannelModel): void {
  const stream = (model.connection as unknown as { stream?: { destroy(): void } }).stream;
  stream?.destroy();
}

/**
 * amqplib queues each frame (a publish, an ack) on its channel and writes every queued frame to the socket
 * with a write() of its own, so a batch of 64 acks costs 64 system calls (and 64 TCP segments for the
 * broker to read). Corking the socket while its muxer drains the queues sends what was queued in one turn
 * with one writev. The muxer is amqplib's internal object (0.10.x): if its shape ever changes, frames are
 * simply written one by one as before.
 */
function coalesceFrames(model: ChannelModel): void {
  type Muxer = { out?: { cork(): void; uncork(): void }; _readIncoming?: () => void };
  const muxer = (model as unknown as { connection?: { muxer?: Muxer } }).connection?.muxer;
  const out = muxer?.out;
  const drain = muxer?._readIncoming;
  if (!muxer || !out || typeof out.cork !== 'function' || typeof drain !== 'function') return;
  muxer._readIncoming = () => {
    out.cork();
    try {
      drain.call(muxer);
    } finally {
      out.uncork();
    }
  };
}
