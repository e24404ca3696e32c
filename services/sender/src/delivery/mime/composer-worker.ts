// A composer thread (see composer-pool.ts): composes and DKIM-signs each job it is sent.
import { serveWorkerJobs } from '@postline/platform/worker';
import { composeMessage } from '../../message/index.ts';
import type { ComposerJob } from './composer-pool.ts';
import { createDkimSigner } from './dkim.ts';

// Only an error's name and message leave this thread, so stack traces are never read here; and Node's
// stream.pipeline (inside nodemailer's composer) builds an AbortError for every message it finishes, whose
// stack capture would be a cost of every message.
Error.stackTraceLimit = 0;

/** This thread's signer: each thread opens the keys it signs with once. */
const sign = createDkimSigner();

serveWorkerJobs(
  async ({ input, key }: ComposerJob): Promise<Uint8Array> => {
    // Buffers arrive as plain Uint8Arrays.
    const attachments = input.attachments.map((a) => ({ ...a, content: Buffer.from(a.content) }));
    const signed = await sign(await composeMessage({ ...input, attachments }), key);
    // A copy that owns its memory, so it can be moved to the main thread rather than copied again.
    const raw = new Uint8Array(signed.length);
    raw.set(signed);
    return raw;
  },
  (raw) => [raw.buffer as ArrayBuffer],
);
