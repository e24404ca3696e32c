import type { Kysely } from 'kysely';
import type { Message } from '@postline/contracts';
import { PermanentError } from '@postline/platform';
import type { SchedulerDb } from '../db/schema.ts';
import { cancelTimer, setTimer } from '../db/timers.ts';
import { checkCommandId, checkTimerSet } from '../domain/timer.ts';
import type { SchedulerMetrics } from '../metrics.ts';

export type TimerCommand = Message<'scheduler.set-timer' | 'scheduler.cancel-timer'>;

export type ApplyTimerCommandDeps = {
  metrics: SchedulerMetrics;
  /** A set due within this many ms wakes the firing loops at commit (they poll at this interval anyway). */
  wakeWithinMs: number;
};

/**
 * Sets or cancels a timer. Runs in the consumer's transaction (inbox row already written); an invalid
 * command throws a PermanentError (dead-lettered), a command older than the key's last one is counted
 * stale and changes nothing.
 */
export async function applyTimerCommand(
  deps: ApplyTimerCommandDeps,
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
