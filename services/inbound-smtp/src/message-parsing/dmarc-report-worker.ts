// The DMARC report reading thread (see dmarc-report-reader.ts): reads each message's report files.
import { serveWorkerJobs } from '@postline/platform/worker';
import { readDmarcReports, type ReadReport } from '../domain/dmarc-report-reading.ts';
import type { DmarcReadJob } from './dmarc-report-reader.ts';

serveWorkerJobs(({ attachments, limits }: DmarcReadJob): ReadReport[] =>
  readDmarcReports(
    // Buffers arrive as plain Uint8Arrays (structured clone): the reading decodes them as Buffers.
    attachments.map((a) => ({
      ...a,
      content: Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength),
    })),
    limits,
  ),
);
