import net from 'node:net';
import { describe, expect, it, beforeAll, afterAll, jest } from '@jest/globals';
import type { Broker } from '../src/index.ts';
import { createMessagingFixture, deliveredEnvelope, type MessagingFixture } from './messaging-fixture.ts';

jest.setTimeout(30_000);

let fx: MessagingFixture;
let broker: Broker;

beforeAll(async () => {
  fx = await createMessagingFixture();
  broker = await fx.broker();
});

afterAll(async () => {
  await fx.close();
});

describe('broker', () => {
  it('sends the frames queued in one turn with one socket write, not one write per frame', async () => {
    const amqpPort = Number(new URL(fx.amqpUrl).port || 5672);
    // Chunks per write to the broker's socket: 1 for each write(), n for a writev of n chunks.
    const writes: number[] = [];
    const proto = net.Socket.prototype as unknown as Record<
      '_write' | '_writev',
      (this: net.Socket, ...args: unknown[]) => unknown
    >;
    const original = { _write: proto._write, _writev: proto._writev };
    const toBroker = (socket: net.Socket) => socket.remotePort === amqpPort;
    proto._write = function (this: net.Socket, ...args: unknown[]) {
      if (toBroker(this)) writes.push(1);
      return original._write.apply(this, args);
    };
    proto._writev = function (this: net.Socket, ...args: unknown[]) {
      if (toBroker(this)) writes.push((args[0] as unknown[]).length);
      return original._writev.apply(this, args);
    };
    try {
      const envelopes = Array.from({ length: 50 }, () => deliveredEnvelope());
      const results = await Promise.all(
        envelopes.map((e) =>
          broker.publish(broker.exchanges.events, 'email.delivered', Buffer.from(JSON.stringify(e)), {
            messageId: e.id,
          }),
        ),
      );
      // Nobody is bound: every publish comes back returned, which still needs the broker to have read it.
      expect(results.every((r) => r.ok || r.reason === 'returned')).toBe(true);
    } finally {
      Object.assign(proto, original);
    }
    // The 50 publishes were made in one turn; uncorked they would take 50 writes.
    expect(writes.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(50);
    expect(writes.length).toBeLessThanOrEqual(5);
  });
});
