import { once, waitInLine } from './slots.ts';

export type KeyedSlots = {
  /**
   * One of `key`'s slots: at once, or after waiting in line (FIFO) behind at most `maxWaiting` others
   * (default: no limit) for at most `timeoutMs` (default: as long as it takes). Resolves to the release
   * (safe to call twice), or undefined when no slot was had.
   */
  acquire: (key: string, opts?: { timeoutMs?: number; maxWaiting?: number }) => Promise<(() => void) | undefined>;
  /** How many hold one of `key`'s slots now. */
  active: (key: string) => number;
};

type Line = { active: number; waiting: (() => void)[] };

/**
 * At most `maxPerKey` holders per key (an SMTP destination, a webhook endpoint), each key with its own line
 * of waiters. A release hands the slot straight to the next waiter of that key; a key with no holder and
 * no waiter is forgotten, so the map holds only keys in use.
 */
export function createKeyedSlots(maxPerKey: number): KeyedSlots {
  const lines = new Map<string, Line>();

  function releaseOf(key: string, line: Line): () => void {
    return once(() => {
      const next = line.waiting.shift();
      if (next) return next(); // the slot passes to the next waiter: `active` stays the same
      line.active--;
      if (line.active === 0 && line.waiting.length === 0) lines.delete(key);
    });
  }

  return {
    async acquire(key, opts = {}) {
      let line = lines.get(key);
      if (!line) {
        line = { active: 0, waiting: [] };
        lines.set(key, line);
      }
      if (line.active < maxPerKey) {
        line.active++;
        return releaseOf(key, line);
      }
      if (opts.maxWaiting !== undefined && line.waiting.length >= opts.maxWaiting) return undefined;
      const granted = await waitInLine(line.waiting, opts.timeoutMs);
      if (granted) return releaseOf(key, line);
      if (line.active === 0 && line.waiting.length === 0) lines.delete(key);
      return undefined;
    },
    active(key) {
      return lines.get(key)?.active ?? 0;
    },
  };
}
