/**
 * A costly module (or anything loaded once) brought in when first asked for, not at start: a parser that
 * holds megabytes of heap is then held only by a process that has had work for it. Every call after the
 * first gets the same promise; a load that fails is tried again at the next call.
 *
 * const mailparser = loadOnFirstUse(() => import('mailparser'));
 * const { simpleParser } = await mailparser();
 */
export function loadOnFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}
