// Operator commands on dead letters, one JSON line per queue or message, then a summary line:
//   dead-letters list [--queue Q]              → per queue: {"queue","dead_queue","dead_letters"}
//   dead-letters show --queue Q [--limit N]    → per message: id, type, team, reason, error, deaths, first and last death
//   dead-letters redrive --queue Q [--limit N] → per message moved back to its work queue, then how many
// Q is a consumer's work queue, with or without the BROKER_PREFIX (`sender.deliver`), or its `.dead` queue.
import { type z } from 'zod';
import {
  BaseEnv,
  BrokerEnv,
  createBroker,
  createLogger,
  deadQueueName,
  parseEnv,
  peekDeadLetters,
  queueDepth,
  redriveDeadLetters,
  type Broker,
} from '@postline/platform';
import { CONSUMER_QUEUES } from './consumer-queues.ts';

export class UsageError extends Error {}

export const DEAD_LETTERS_USAGE = `  dead-letters list [--queue Q]
  dead-letters show --queue Q [--limit N]        (default 20; read without removing them)
  dead-letters redrive --queue Q [--limit N]     (default: every message dead when it starts)`;

const Env = BrokerEnv.extend({ LOG_LEVEL: BaseEnv.shape.LOG_LEVEL });
/** How long the command waits for RabbitMQ before it gives up (the broker itself retries forever). */
const CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_SHOW_LIMIT = 20;

export type Line = Record<string, unknown>;

/** Runs one dead-letters command and returns its output lines. */
export async function deadLetters(
  verb: string | undefined,
  values: { queue?: string; limit?: string },
  env: NodeJS.ProcessEnv,
): Promise<Line[]> {
  if (verb !== 'list' && verb !== 'show' && verb !== 'redrive') throw new UsageError(`usage:\n${DEAD_LETTERS_USAGE}`);
  if (verb !== 'list' && !values.queue) throw new UsageError(`--queue is required for dead-letters ${verb}`);
  const limit = parseLimit(values.limit, verb === 'show' ? DEFAULT_SHOW_LIMIT : Number.MAX_SAFE_INTEGER);
  const config = parseEnv(Env, env);
  const broker = await connect(config);
  try {
    const named = values.queue === undefined ? undefined : workQueue(values.queue, config.BROKER_PREFIX);
    if (verb === 'list') {
      const queues = named
        ? [{ queue: named, optional: false }]
        : CONSUMER_QUEUES.map(({ service, consumer, optional }) => ({
            queue: `${config.BROKER_PREFIX}.${service}.${consumer}`,
            optional: optional === true,
          }));
      const lines = await Promise.all(
        queues.map(async ({ queue, optional }) => ({ optional, line: await countLine(broker, queue) })),
      );
      return lines.filter(({ optional, line }) => !optional || line.declared !== false).map(({ line }) => line);
    }
    const queue = named as string;
    if ((await queueDepth(broker, deadQueueName(queue))) === undefined)
      throw new UsageError(`no queue ${deadQueueName(queue)}`);
    if (verb === 'show') {
      const letters = await peekDeadLetters(broker, queue, limit);
      const remaining = await queueDepth(broker, deadQueueName(queue));
      return [
        ...letters.map((letter) => ({ queue, ...letter })),
        { queue, shown: letters.length, dead_letters: remaining ?? null },
      ];
    }
    const moved: Line[] = [];
    const count = await redriveDeadLetters(broker, queue, limit, (letter) =>
      moved.push({ queue, redriven: true, ...letter }),
    );
    return [
      ...moved,
      { queue, redriven: count, dead_letters: (await queueDepth(broker, deadQueueName(queue))) ?? null },
    ];
  } finally {
    await broker.stop();
  }
}

async function countLine(broker: Broker, queue: string): Promise<Line> {
  const dead = deadQueueName(queue);
  const count = await queueDepth(broker, dead);
  return count === undefined
    ? { queue, dead_queue: dead, dead_letters: null, declared: false }
    : { queue, dead_queue: dead, dead_letters: count };
}

/** `sender.deliver`, `<prefix>.sender.deliver` and `<prefix>.sender.deliver.dead` all name the same consumer. */
function workQueue(given: string, prefix: string): string {
  const name = given.endsWith('.dead') ? given.slice(0, -'.dead'.length) : given;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) throw new UsageError(`--queue ${given} is not a queue name`);
  return name.startsWith(`${prefix}.`) ? name : `${prefix}.${name}`;
}

function parseLimit(given: string | undefined, fallback: number): number {
  if (given === undefined) return fallback;
  const limit = Number(given);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive integer');
  return limit;
}

/** A broker connection for the command, or an error when RabbitMQ does not answer in time. */
async function connect(config: z.infer<typeof Env>): Promise<Broker> {
  // Logs go to stderr: stdout carries only the command's JSON lines.
  const logger = createLogger({
    service: 'admin',
    level: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL,
    destination: process.stderr,
  });
  const broker = createBroker({ url: config.AMQP_URL, prefix: config.BROKER_PREFIX, logger, connectionName: 'admin' });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CONNECT_TIMEOUT_MS)));
  const started = await Promise.race([broker.start().then(() => 'up' as const), late]);
  clearTimeout(timer);
  if (started === 'late' || !broker.isConnected()) {
    await broker.stop();
    throw new Error(`RabbitMQ did not answer within ${CONNECT_TIMEOUT_MS / 1000} s (AMQP_URL)`);
  }
  return broker;
}
