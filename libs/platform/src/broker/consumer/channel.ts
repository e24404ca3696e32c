import type { Channel, ConsumeMessage } from 'amqplib';
import type { Logger } from '../../logger/logger.ts';
import { createAcker, type Acker } from '../acks.ts';
import type { Broker, Setup } from '../broker.ts';
import { declareConsumerQueues, type Binding, type ConsumerQueueNames } from '../topology.ts';

/** Acks or requeues a delivery on the channel it came on. */
export type Settle = (ch: Channel, msg: ConsumeMessage, how: 'ack' | 'requeue') => void;

export type ConsumerChannel = {
  /** For Broker.addSetup: on each connection, opens the channel, declares the queues and consumes. */
  setup: Setup;
  /** Acks on the delivering channel; if that channel is gone the broker redelivers, which is safe. */
  settle: Settle;
  /**
   * Stops the deliveries (basic.cancel) and no longer reopens the channel. The function it returns sends
   * the acks of this turn and closes the channel, which returns anything still unacked to the queue.
   */
  cancel(): Promise<() => Promise<void>>;
  /** Reopens the channel again after a server-side close (start after a stop). */
  resume(): void;
};

/**
 * The consumer's channel through its life: opened on every broker connection, reopened on the same
 * connection after a pause when the server closed only the channel, closed at stop.
 */
export function createConsumerChannel(opts: {
  broker: Broker;
  queues: ConsumerQueueNames;
  bindings: readonly Binding[];
  prefetch: number;
  log: Logger;
  /** Each delivery, once its arrival is noted for the acks. */
  deliver: (ch: Channel, msg: ConsumeMessage) => void;
}): ConsumerChannel {
  const { broker, queues, log } = opts;
  let channel: Channel | undefined;
  let consumerTag: string | undefined;
  let stopping = false;
  const ackers = new WeakMap<Channel, Acker>();

  const setup: Setup = async (connection) => {
    let connectionClosed = false;
    connection.once('close', () => (connectionClosed = true));
    const ch = await connection.createChannel();
    ch.on('error', (err: unknown) => log.warn({ err }, 'consumer channel error'));
    ch.on('close', () => {
      if (channel !== ch) return;
      channel = undefined;
      consumerTag = undefined;
      // The server closed only this channel: open it again on the same connection after a pause. When the
      // whole connection went, the broker's reconnect runs this setup again instead.
      if (stopping) return;
      setTimeout(() => {
        if (stopping || channel || connectionClosed) return;
        setup(connection).catch((err: unknown) => log.warn({ err }, 'consumer re-setup failed'));
      }, 1_000).unref();
    });
    await declareConsumerQueues(ch, broker.exchanges, queues, opts.bindings);
    await ch.prefetch(opts.prefetch);
    const acker = createAcker(ch);
    ackers.set(ch, acker);
    const reply = await ch.consume(
      queues.work,
      (msg) => {
        if (msg) {
          acker.received(msg);
          opts.deliver(ch, msg);
        }
        // null: the server cancelled us (queue deleted); closing leads to a fresh declare and consume.
        else ch.close().catch(() => undefined);
      },
      { noAck: false },
    );
    channel = ch;
    consumerTag = reply.consumerTag;
  };

  function settle(ch: Channel, msg: ConsumeMessage, how: 'ack' | 'requeue'): void {
    const acker = ackers.get(ch);
    if (!acker) return;
    try {
      if (how === 'ack') acker.ack(msg);
      else acker.requeue(msg);
    } catch (err) {
      log.debug({ err }, 'channel closed before settling; the message will be redelivered');
    }
  }

  return {
    setup,
    settle,
    resume() {
      stopping = false;
    },
    async cancel() {
      stopping = true;
      const ch = channel;
      const tag = consumerTag;
      channel = undefined;
      if (ch && tag) await ch.cancel(tag).catch(() => undefined);
      return async () => {
        if (!ch) return;
        ackers.get(ch)?.flush();
        await ch.close().catch(() => undefined);
      };
    },
  };
}
