import type { Channel, ConsumeMessage } from 'amqplib';
import type { Message } from '@postline/contracts';
import type { Logger } from '../../logger/logger.ts';
import type { Broker } from '../broker.ts';
import { DEAD_HEADERS, REDRIVEN_AT_HEADER } from '../dead-letters.ts';
import { decideFailure, RETRY_COUNT_HEADER, type DeadReason, type RetryPolicy } from '../retry-policy.ts';
import type { ConsumerQueueNames } from '../topology.ts';
import type { Settle } from './channel.ts';
import type { Outcome } from './types.ts';

export type FailureRouting = {
  /** Retry tier or dead letter for a failed prepare or handler, by the retry policy. */
  fail(ch: Channel, msg: ConsumeMessage, message: Message, attempt: number, err: unknown): Promise<Outcome>;
  /** Moves the delivery to the dead-letter queue with why it died; the original is acked once that is confirmed. */
  deadLetter(ch: Channel, msg: ConsumeMessage, attempt: number, reason: DeadReason, error: string): Promise<Outcome>;
};

/** Where a failed delivery goes: a delay tier, the dead-letter queue, or back to its queue if neither took it. */
export function createFailureRouting(opts: {
  broker: Broker;
  queues: ConsumerQueueNames;
  policy: RetryPolicy;
  consumerId: string;
  log: Logger;
  settle: Settle;
}): FailureRouting {
  const { broker, queues, policy, consumerId, log, settle } = opts;
  const metrics = broker.metrics;

  async function fail(
    ch: Channel,
    msg: ConsumeMessage,
    message: Message,
    attempt: number,
    err: unknown,
  ): Promise<Outcome> {
    const decision = decideFailure(err, attempt, policy);
    const context = { err, message_id: message.id, type: message.type, attempt };
    if (decision.action === 'dead') {
      log.warn({ ...context, reason: decision.reason }, 'handler failed; dead-lettering');
      return deadLetter(ch, msg, attempt, decision.reason, errorText(err));
    }
    log.info({ ...context, retry_in_ms: decision.tierMs }, 'handler failed; retrying later');
    const tier = queues.tiers.find((t) => t.delayMs === decision.tierMs);
    const moved = await moveTo(ch, msg, tier?.queue ?? queues.work, { [RETRY_COUNT_HEADER]: attempt });
    if (moved) metrics?.retried.inc({ consumer: consumerId });
    return moved ? 'retried' : 'requeued';
  }

  async function deadLetter(
    ch: Channel,
    msg: ConsumeMessage,
    attempt: number,
    reason: DeadReason,
    error: string,
  ): Promise<Outcome> {
    const headers: Record<string, unknown> = msg.properties.headers ?? {};
    const now = new Date().toISOString();
    const earlierDeaths = Number(headers[DEAD_HEADERS.count]);
    const moved = await moveTo(ch, msg, queues.dead, {
      [RETRY_COUNT_HEADER]: attempt - 1,
      [DEAD_HEADERS.reason]: reason,
      [DEAD_HEADERS.error]: error.slice(0, 500),
      [DEAD_HEADERS.at]: now,
      // A redriven message that dies again keeps its first death and counts this one.
      [DEAD_HEADERS.firstAt]: typeof headers[DEAD_HEADERS.firstAt] === 'string' ? headers[DEAD_HEADERS.firstAt] : now,
      [DEAD_HEADERS.count]: (Number.isInteger(earlierDeaths) && earlierDeaths > 0 ? earlierDeaths : 0) + 1,
      ...(typeof headers[REDRIVEN_AT_HEADER] === 'string' ? { [REDRIVEN_AT_HEADER]: headers[REDRIVEN_AT_HEADER] } : {}),
    });
    if (moved) metrics?.deadLettered.inc({ consumer: consumerId, reason });
    return moved ? 'dead_lettered' : 'requeued';
  }

  /**
   * Publishes a copy to `queue` with confirms, then acks the original: a crash in between duplicates the
   * message (the inbox absorbs it), never loses it. When the copy is not confirmed, the original goes back.
   */
  async function moveTo(ch: Channel, msg: ConsumeMessage, queue: string, extra: Record<string, unknown>) {
    const headers: Record<string, unknown> = msg.properties.headers ?? {};
    const result = await broker.publish('', queue, msg.content, {
      messageId: String(msg.properties.messageId ?? ''),
      type: msg.properties.type as string | undefined,
      headers: {
        'x-original-exchange': headers['x-original-exchange'] ?? msg.fields.exchange,
        'x-original-routing-key': headers['x-original-routing-key'] ?? msg.fields.routingKey,
        ...extra,
      },
    });
    if (result.ok) {
      settle(ch, msg, 'ack');
      return true;
    }
    log.warn({ queue, reason: result.reason }, 'could not move message; requeueing');
    // A broker that refuses the copy would otherwise hand the message straight back in a tight loop.
    await new Promise((resolve) => setTimeout(resolve, 500));
    settle(ch, msg, 'requeue');
    return false;
  }

  return { fail, deadLetter };
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
