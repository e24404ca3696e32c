import type { Broker } from './broker.ts';
import { RETRY_COUNT_HEADER } from './retry-policy.ts';
import { deadQueueName } from './topology.ts';

/** Ready messages in `queue`; undefined when the broker is down or the queue does not exist. */
export async function queueDepth(broker: Broker, queue: string): Promise<number | undefined> {
  if (!broker.isConnected()) return undefined;
  try {
    return await broker.withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount);
  } catch {
    return undefined;
  }
}

/**
 * Moves up to `max` messages from `${queue}.dead` back to the work queue `queue`, oldest first, each with a
 * fresh retry budget; only messages already dead when it starts. Each copy is confirmed before its dead letter is acked, so a failure midway
 * duplicates at most one message (consumers are idempotent) and loses none. Returns how many moved.
 *
 * @example
 * await redriveDeadLetters(broker, consumer.queues.work, 100);
 */
export async function redriveDeadLetters(broker: Broker, queue: string, max: number): Promise<number> {
  const dead = deadQueueName(queue);
  return broker.withChannel(async (ch) => {
    // Only what is dead now: a message that fails again while we run lands behind this snapshot.
    const limit = Math.min(max, (await ch.checkQueue(dead)).messageCount);
    let moved = 0;
    while (moved < limit) {
      const msg = await ch.get(dead, { noAck: false });
      if (msg === false) break;
      const { [RETRY_COUNT_HEADER]: _retries, ...headers } = msg.properties.headers ?? {};
      for (const key of Object.keys(headers))
        if (key.startsWith('x-dead-') || key.startsWith('x-death') || key.startsWith('x-first-death'))
          delete headers[key];
      const result = await broker.publish('', queue, msg.content, {
        messageId: String(msg.properties.messageId ?? ''),
        type: msg.properties.type as string | undefined,
        headers: { ...headers, 'x-redriven-at': new Date().toISOString() },
      });
      if (!result.ok) {
        ch.nack(msg, false, true);
        throw new Error(`redrive stopped after ${moved} messages: publish ${result.reason}`);
      }
      ch.ack(msg);
      moved++;
    }
    broker.logger.info({ queue, moved }, 'redrove dead letters');
    return moved;
  });
}
