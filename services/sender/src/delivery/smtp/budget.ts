/**
 * A memory budget for messages being delivered: an attempt reserves what its message will take before
 * reading its attachments and composing it, and gives it back once the SMTP transaction is over. So the
 * number of attempts in flight (DELIVERY_CONCURRENCY) can be high for throughput while a burst of
 * 40 MB messages still cannot exhaust the process's memory. Waiters are served in arrival order; a message
 * larger than the whole budget waits until it has the budget to itself.
 *
 * @example
 * const release = await budget.reserve(estimate);
 * try { await deliver(); } finally { release(); }
 */
export type ByteBudget = {
  reserve(bytes: number): Promise<() => void>;
  /** Bytes reserved now. */
  readonly reserved: number;
};

export function createByteBudget(totalBytes: number): ByteBudget {
  let reserved = 0;
  const waiting: { bytes: number; grant: () => void }[] = [];

  function pump(): void {
    while (waiting.length > 0 && reserved + (waiting[0] as { bytes: number }).bytes <= totalBytes) {
      const next = waiting.shift() as { bytes: number; grant: () => void };
      reserved += next.bytes;
      next.grant();
    }
  }

  return {
    reserve(bytes) {
      const amount = Math.min(Math.max(0, Math.ceil(bytes)), totalBytes);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        reserved -= amount;
        pump();
      };
      if (waiting.length === 0 && reserved + amount <= totalBytes) {
        reserved += amount;
        return Promise.resolve(release);
      }
      return new Promise((resolve) => waiting.push({ bytes: amount, grant: () => resolve(release) }));
    },
    get reserved() {
      return reserved;
    },
  };
}

/**
 * What delivering a message holds at most: its text parts and its attachments base64-encoded (4/3 and
 * line breaks), with room for the headers, counted twice since the composed message and its signed copy
 * briefly coexist.
 */
export function messageFootprint(email: { html: string | null; text: string | null }, attachmentBytes: number): number {
  const textBytes = (email.html?.length ?? 0) * 2 + (email.text?.length ?? 0);
  return 2 * (textBytes + Math.ceil(attachmentBytes * 1.4) + 16 * 1024);
}
