// DMARC aggregate reports read off the MX's event loop. Inflating a large report and parsing its XML takes
// seconds of CPU (2.5 to 3 s for 17.6 MiB of 20,000 records on a busy 2-core machine); on the event loop
// that also answers every SMTP session, the MX would stop answering for that long. So the reading runs on
// a worker thread (the platform's worker pool), started when a report arrives and stopped once none has
// come for a while: reports come in a burst or two a day, and an idle thread would hold its own heap and
// module graph for nothing.
import type { Worker } from 'node:worker_threads';
import { createWorkerPool, type Logger } from '@postline/platform';
import type { DmarcLimits, ReadReport } from '../domain/dmarc-report-reading.ts';
import type { ParsedAttachment } from '../domain/received-message.ts';

/** What the reading thread is given: a message's attachments (copied to it) and the limits. */
export type DmarcReadJob = { attachments: readonly ParsedAttachment[]; limits: DmarcLimits };

export type DmarcReportReader = {
  /** The reports of a report message's attachments, read on the thread (readDmarcReports). */
  read: (attachments: readonly ParsedAttachment[]) => Promise<ReadReport[]>;
  close: () => Promise<void>;
  /** The reading threads running now (none while idle). */
  workers: () => readonly Worker[];
};

/** How long the reading thread waits for another report before it stops. */
export const DMARC_READER_IDLE_MS = 30_000;

/**
 * One reading thread, started with the first report and stopped `idleMs` after the last: reports are rare
 * enough that one thread keeps up, and the MX's own thread keeps the other core. A thread that dies (a
 * report past its heap, say) fails its job: the MX answers 451 and the reporter retries later.
 */
export function createDmarcReportReader(opts: {
  limits: DmarcLimits;
  idleMs?: number;
  logger?: Logger;
}): DmarcReportReader {
  const pool = createWorkerPool<DmarcReadJob, ReadReport[]>({
    name: 'dmarc-report',
    url: new URL('./dmarc-report-worker.ts', import.meta.url),
    threads: 1,
    idleMs: opts.idleMs ?? DMARC_READER_IDLE_MS,
    logger: opts.logger,
  });
  return {
    read: (attachments) => pool.run({ attachments, limits: opts.limits }),
    close: () => pool.close(),
    workers: () => pool.workers(),
  };
}
