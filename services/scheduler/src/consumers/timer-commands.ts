import type { Kysely } from 'kysely';
import type { Message } from '@postline/contracts';
import { createConsumer, PermanentError, type Broker, type Consumer, type Logger } from '@postline/platform';
import type { SchedulerDb } from '../db/schema.ts';
import { cancelTimer, setTimer } from '../db/timers.ts';
import { checkCommandId, checkTimerSet } from '../domain/timer.ts';
import type { SchedulerMetrics } from '../metrics.ts';

export type TimerCommandsDeps = {
  broker: Broker;
  db: Kysely<SchedulerDb>;
  logger: Logger;
  metrics: SchedulerMetrics;
  /** A set due within this many ms wakes the firing loops at commit (they poll at this interval anyway). */
  wakeWithinMs: number;
};

type TimerCommand = Message<'scheduler.set-timer' | 'scheduler.cancel-timer'>;

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
    handle: (message, trx) => handleTimerCommand(deps, message, trx),
  });
}

/** Runs in the consumer's transaction (inbox row already written); a PermanentError dead-letters the command. */
export async function handleTimerCommand(
  deps: Pick<TimerCommandsDeps, 'metrics' | 'wakeWithinMs'>,
  message: TimerCommand,
  trx: Kysely<SchedulerDb>,
): Promise<void> {
  switch (message.type) {
    case 'scheduler.set-timer': {
      const checked = checkTimerSet(message.id, message.data);
      if (!checked.ok) {
        deps.metrics.commands.inc({ command: 'set', outcome: 'invalid' });
        throw new PermanentError(checked.error);
      }
      const applied = await setTimer(trx, checked.value, deps.wakeWithinMs);
      deps.metrics.commands.inc({ command: 'set', outcome: applied ? 'applied' : 'stale' });
      return;
    }
    case 'scheduler.cancel-timer': {
      const id = checkCommandId(message.id);
      if (!id.ok) {
        deps.metrics.commands.inc({ command: 'cancel', outcome: 'invalid' });
        throw new PermanentError(id.error);
      }
      const applied = await cancelTimer(trx, message.data.key, id.value);
      deps.metrics.commands.inc({ command: 'cancel', outcome: applied ? 'applied' : 'stale' });
      return;
    }
  }
}
