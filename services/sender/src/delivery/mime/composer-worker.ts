// A composer thread (see composer-pool.ts): composes and DKIM-signs each job it is sent.
import { parentPort } from 'node:worker_threads';
import { composeMessage, type ComposeInput } from '../../message/index.ts';
import type { ComposerReply } from './composer-pool.ts';
import { createDkimSigner, type DkimKey } from './dkim.ts';

const port = parentPort;
if (!port) throw new Error('composer-worker.ts runs only as a worker thread');

// Only an error's name and message leave this thread, so stack traces are never read here; and Node's
// stream.pipeline (inside nodemailer's composer) builds an AbortError for every message it finishes, whose
// stack capture would be a cost of every message.
Error.stackTraceLimit = 0;

/** This thread's signer: each thread opens the keys it signs with once. */
const sign = createDkimSigner();

port.on('message', (job: { id: number; input: ComposeInput; key: DkimKey }) => {
  void handle(job).then(
    (reply) => port.postMessage(reply, 'raw' in reply ? [reply.raw.buffer as ArrayBuffer] : []),
    (err: unknown) =>
      port.postMessage({ id: job.id, error: { name: 'Error', message: String(err) } } satisfies ComposerReply),
  );
});

async function handle({ id, input, key }: { id: number; input: ComposeInput; key: DkimKey }): Promise<ComposerReply> {
  try {
    // Buffers arrive as plain Uint8Arrays.
    const attachments = input.attachments.map((a) => ({ ...a, content: Buffer.from(a.content) }));
    const signed = await sign(await composeMessage({ ...input, attachments }), key);
    // A copy that owns its memory, so it can be moved to the main thread rather than copied again.
    const raw = new Uint8Array(signed.length);
    raw.set(signed);
    return { id, raw };
  } catch (err) {
    const { name, message } = err instanceof Error ? err : new Error(String(err));
    return { id, error: { name, message } };
  }
}
