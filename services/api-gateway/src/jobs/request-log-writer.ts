import type { Kysely } from 'kysely';
import type { Logger } from '@postline/platform';
import { insertRequestLogs } from '../db/request-logs.ts';
import type { GatewayDb, NewRequestLog } from '../db/schema.ts';

export type RequestLogWriter = {
  record: (entry: NewRequestLog) => void;
  flush: () => Promise<void>;
  start: () => void;
  stop: () => Promise<void>;
};

/**
 * Buffers request logs in memory and writes them in batches behind the requests, so logging never adds a
 * database round trip to a request. Bounded: past `maxBuffered` entries the oldest are dropped (and
 * counted) rather than growing without limit while the database is slow.
 */
export function createRequestLogWriter(deps: {
  db: Kysely<GatewayDb>;
  logger: Logger;
  flushIntervalMs?: number;
  batchSize?: number;
  maxBuffered?: number;
  onDropped?: (n: number) => void;
}): RequestLogWriter {
  const batchSize = deps.batchSize ?? 500;
  const maxBuffered = deps.maxBuffered ?? 20_000;
  const buffer: NewRequestLog[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  const writeOnce = async () => {
    while (buffer.length > 0) {
      const batch = buffer.splice(0, batchSize);
      try {
        await insertRequestLogs(deps.db, batch);
      } catch (err) {
        // One row the database refuses must not block the rest: write row by row and drop what still fails.
        const failed: NewRequestLog[] = [];
        for (const row of batch) {
          try {
            await insertRequestLogs(deps.db, [row]);
          } catch {
            failed.push(row);
          }
        }
        if (failed.length === batch.length) {
          // The database itself is failing: put the batch back and try again on the next tick.
          buffer.unshift(...batch);
          deps.logger.error({ err, pending: buffer.length }, 'could not write request logs; will retry');
          return;
        }
        if (failed.length > 0) {
          deps.onDropped?.(failed.length);
          deps.logger.warn({ dropped: failed.length }, 'request log rows refused by the database');
        }
      }
    }
  };
  const flush = () => {
    flushing = flushing.then(writeOnce);
    return flushing;
  };

  return {
    record: (entry) => {
      buffer.push(entry);
      if (buffer.length > maxBuffered) {
        const dropped = buffer.length - maxBuffered;
        buffer.splice(0, dropped);
        deps.onDropped?.(dropped);
      }
      if (buffer.length >= batchSize) void flush();
    },
    flush,
    start: () => {
      timer = setInterval(() => void flush(), deps.flushIntervalMs ?? 200);
      timer.unref();
    },
    stop: async () => {
      if (timer) clearInterval(timer);
      await flush();
    },
  };
}
