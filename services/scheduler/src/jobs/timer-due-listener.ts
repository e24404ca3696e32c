import { listenChannel, type Logger } from '@postline/platform';
import { timerDueChannel } from '../db/timers.ts';

export type TimerDueListener = { stop(): Promise<void> };

/**
 * Calls `onDue` for each notification on the schema's timer channel (`notifyTimerDue`, sent at the commit
 * of a set due soon) and after every (re)connect, since timers may have been stored while it was not
 * listening. The firing loop's poll covers the gaps.
 */
export function listenForTimerDue(opts: {
  databaseUrl: string;
  schema: string;
  logger: Logger;
  onDue: () => void;
}): TimerDueListener {
  return listenChannel({
    databaseUrl: opts.databaseUrl,
    channel: timerDueChannel(opts.schema),
    logger: opts.logger,
    applicationName: 'scheduler-listen',
    onNotification: opts.onDue,
    onListening: opts.onDue,
  });
}
