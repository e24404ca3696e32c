import type { Kysely } from 'kysely';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SchedulerDb } from '../db/schema.ts';
import { applyTimerCommand, type ApplyTimerCommandDeps } from '../use-cases/apply-timer-command.ts';

export type TimerCommandsDeps = ApplyTimerCommandDeps & {
  broker: Broker;
  db: Kysely<SchedulerDb>;
  logger: Logger;
};

/**
 * `scheduler.set-timer` and `scheduler.cancel-timer` on one queue, so that both commands for a key share
 * the consumer's inbox and retries. Set and cancel may still arrive reordered (retries, prefetch); the
 * queries apply a command only when its id is newer than the key's last one.
 */
export function createTimerCommandsConsumer(deps: TimerCommandsDeps): Consumer {
  return createConsumer({
    broker: deps.broker,
    db: deps.db,
    service: 'scheduler',
    name: 'timer-commands',
    bindings: [
      { exchange: 'commands', routingKey: 'scheduler.set-timer' },
      { exchange: 'commands', routingKey: 'scheduler.cancel-timer' },
    ],
    logger: deps.logger,
    handle: (message, trx) => applyTimerCommand(deps, message, trx),
  });
}
