import amqp from 'amqplib';
import { v7 as uuidv7 } from 'uuid';
import { createWaitList } from './wait.ts';

export type ObservedMessage = {
  routingKey: string;
  exchange: string;
  envelope: { id: string; type: string; team_id: string | null; occurred_at: string; data: Record<string, unknown> };
};

export type BrokerObserver = {
  messages: ObservedMessage[];
  /**
   * Resolves with the first message (already seen or arriving) that matches; rejects after `timeoutMs`.
   * `since` (an index into `messages`) ignores the messages that arrived before it.
   */
  waitFor: (
    what: string,
    match: (m: ObservedMessage) => boolean,
    opts?: { timeoutMs?: number; since?: number },
  ) => Promise<ObservedMessage>;
  /**
   * Publishes an event envelope (new UUIDv7 id) on the events exchange, as a service would: for messages
   * another service's issue will produce (e.g. inbound feedback) or events a test injects.
   */
  publishEvent: (type: string, teamId: string | null, data: unknown) => string;
  close: () => Promise<void>;
};

/**
 * Watches what the services publish: a private, auto-deleted queue bound to `${prefix}.<exchange>` with the
 * given routing-key patterns (topic patterns on `events`, exact keys on `commands`). Start it after the
 * services: they declare the exchanges.
 *
 * @example
 * const events = await observeBroker({ amqpUrl, prefix, bindings: [{ exchange: 'events', pattern: 'domain.*' }] });
 * await events.waitFor('domain.created', (m) => m.routingKey === 'domain.created');
 */
export async function observeBroker(opts: {
  amqpUrl: string;
  prefix: string;
  bindings: { exchange: 'events' | 'commands'; pattern: string }[];
}): Promise<BrokerObserver> {
  const connection = await amqp.connect(opts.amqpUrl);
  const channel = await connection.createChannel();
  const messages: ObservedMessage[] = [];
  const waits = createWaitList();
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  for (const binding of opts.bindings) {
    const exchange = `${opts.prefix}.${binding.exchange}`;
    await channel.checkExchange(exchange);
    await channel.bindQueue(queue, exchange, binding.pattern);
  }
  await channel.consume(
    queue,
    (msg) => {
      if (!msg) return;
      messages.push({
        routingKey: msg.fields.routingKey,
        exchange: msg.fields.exchange,
        envelope: JSON.parse(msg.content.toString('utf8')) as ObservedMessage['envelope'],
      });
      waits.notify();
    },
    { noAck: true },
  );

  return {
    messages,
    waitFor(what, match, opts = {}) {
      const since = opts.since ?? 0;
      return waits.until(
        what,
        () => messages.slice(since).find(match),
        opts.timeoutMs ?? 15_000,
        () => `saw: ${messages.map((m) => m.routingKey).join(', ')}`,
      );
    },
    publishEvent(type, teamId, data) {
      const id = uuidv7();
      const envelope = { id, type, version: 1, occurred_at: new Date().toISOString(), team_id: teamId, data };
      channel.publish(`${opts.prefix}.events`, type, Buffer.from(JSON.stringify(envelope)), { persistent: true });
      return id;
    },
    async close() {
      await channel.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}
