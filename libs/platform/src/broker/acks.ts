import type { Channel, ConsumeMessage } from 'amqplib';

/** Settles the deliveries of one consumer channel. */
export type Acker = {
  /** Notes a delivery as it arrives (delivery tags rise on a channel). */
  received(msg: ConsumeMessage): void;
  /** Acks `msg` with the others acked in the same turn. */
  ack(msg: ConsumeMessage): void;
  /** Sends the nack (requeue) at once, so that no later multiple ack can cover it. */
  requeue(msg: ConsumeMessage): void;
  /** Sends this turn's acks now (before the channel closes). */
  flush(): void;
};

/**
 * Acks on one channel, coalesced per event-loop turn. The acks of a turn go out as one `basic.ack` with
 * `multiple` for the run of delivery tags with nothing unsettled below it, and one ack each for the
 * rest. A batch of 64 messages then costs the broker one settlement instead of 64: on a quorum queue each
 * settlement is a command in its log. A multiple ack covers only tags known to be settled, so a message
 * still being handled is never acked with its neighbours, and a slow message holds back no one's ack.
 */
export function createAcker(ch: Channel): Acker {
  /** Tags received and not yet known settled, in arrival (ascending) order, from `head`. */
  let unsettled: number[] = [];
  let head = 0;
  /** Tags settled on the wire (acked alone or nacked) that are still in `unsettled`. */
  const settled = new Set<number>();
  let pending: ConsumeMessage[] = [];
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const acks = new Map(pending.map((msg) => [msg.fields.deliveryTag, msg]));
    pending = [];
    let last: ConsumeMessage | undefined;
    while (head < unsettled.length) {
      const tag = unsettled[head] as number;
      const msg = acks.get(tag);
      if (msg) {
        last = msg;
        acks.delete(tag);
      } else if (!settled.delete(tag)) break;
      head++;
    }
    if (head > 1024 && head * 2 > unsettled.length) {
      unsettled = unsettled.slice(head);
      head = 0;
    }
    try {
      if (last) ch.ack(last, true);
      for (const [tag, msg] of acks) {
        ch.ack(msg);
        settled.add(tag);
      }
    } catch {
      // The channel closed first: the broker redelivers what it did not get an ack for, which is safe.
    }
  };

  return {
    received(msg) {
      unsettled.push(msg.fields.deliveryTag);
    },
    ack(msg) {
      pending.push(msg);
      if (scheduled) return;
      scheduled = true;
      setImmediate(flush);
    },
    requeue(msg) {
      settled.add(msg.fields.deliveryTag);
      ch.nack(msg, false, true);
    },
    flush,
  };
}
