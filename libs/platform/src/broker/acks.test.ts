import { describe, expect, it } from '@jest/globals';
import type { Channel, ConsumeMessage } from 'amqplib';
import { createAcker } from './acks.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A channel that notes what it was told, as `ack 5`, `ack ≤5` (multiple) or `nack 5`. */
function fakeChannel() {
  const sent: string[] = [];
  const ch = {
    ack: (msg: ConsumeMessage, allUpTo?: boolean) =>
      sent.push(`${allUpTo ? 'ack ≤' : 'ack '}${msg.fields.deliveryTag}`),
    nack: (msg: ConsumeMessage) => sent.push(`nack ${msg.fields.deliveryTag}`),
  } as unknown as Channel;
  return { ch, sent };
}

const messages = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ fields: { deliveryTag: i + 1 } }) as ConsumeMessage);

describe('createAcker', () => {
  it('acks a turn of consecutive deliveries with one multiple ack', async () => {
    const { ch, sent } = fakeChannel();
    const acker = createAcker(ch);
    const msgs = messages(64);
    msgs.forEach((m) => acker.received(m));
    [...msgs].reverse().forEach((m) => acker.ack(m));
    expect(sent).toEqual([]);
    await turn();
    expect(sent).toEqual(['ack ≤64']);
  });

  it('never covers a delivery still being handled: acks above it go one by one', async () => {
    const { ch, sent } = fakeChannel();
    const acker = createAcker(ch);
    const [m1, m2, m3, m4] = messages(4) as [ConsumeMessage, ConsumeMessage, ConsumeMessage, ConsumeMessage];
    [m1, m2, m3, m4].forEach((m) => acker.received(m));
    acker.ack(m1);
    acker.ack(m3);
    acker.ack(m4);
    await turn();
    expect(sent).toEqual(['ack ≤1', 'ack 3', 'ack 4']);
    // Once the gap closes, the run ends at 2: 3 and 4 are settled already and are not acked twice.
    acker.ack(m2);
    await turn();
    expect(sent).toEqual(['ack ≤1', 'ack 3', 'ack 4', 'ack ≤2']);
  });

  it('sends a requeue at once and acks past it without acking it', async () => {
    const { ch, sent } = fakeChannel();
    const acker = createAcker(ch);
    const [m1, m2, m3] = messages(3) as [ConsumeMessage, ConsumeMessage, ConsumeMessage];
    [m1, m2, m3].forEach((m) => acker.received(m));
    acker.requeue(m2);
    expect(sent).toEqual(['nack 2']);
    acker.ack(m1);
    acker.ack(m3);
    await turn();
    expect(sent).toEqual(['nack 2', 'ack ≤3']);
  });

  it('flush sends the pending acks at once (before a channel closes)', () => {
    const { ch, sent } = fakeChannel();
    const acker = createAcker(ch);
    const [m1, m2] = messages(2) as [ConsumeMessage, ConsumeMessage];
    acker.received(m1);
    acker.received(m2);
    acker.ack(m2);
    acker.flush();
    expect(sent).toEqual(['ack 2']);
  });

  it('keeps working over many turns (its window is compacted)', async () => {
    const { ch, sent } = fakeChannel();
    const acker = createAcker(ch);
    const msgs = messages(5000);
    for (let i = 0; i < msgs.length; i += 100) {
      const slice = msgs.slice(i, i + 100);
      slice.forEach((m) => acker.received(m));
      slice.forEach((m) => acker.ack(m));
      await turn();
    }
    expect(sent).toHaveLength(50);
    expect(sent.at(-1)).toBe('ack ≤5000');
  });
});
