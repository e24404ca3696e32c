import type { KeyWithTeam } from './api-keys.ts';

export type KeyCache<V = KeyWithTeam> = {
  /** The value for that key (a key's token hash, a team id), from memory when it is known to be current, else from `load`. */
  find: (key: string) => Promise<V | undefined>;
  /** Forgets every cached key (a key or team changed somewhere). */
  invalidate: () => void;
  /** Whether entries may be kept: only while change notifications can reach us. */
  setTrusted: (trusted: boolean) => void;
  size: () => number;
};

/**
 * What decides access, looked up on every request: API keys by their token hash, and a team's access by
 * its id (for the key-less public links). Keys looked up on every request, kept in memory so that authenticating is not a database round trip.
 * Correctness rests on invalidation, not on the TTL: every change to a key or a team that decides access
 * fires a NOTIFY that empties the cache of every gateway, and the gateway that made the change empties its
 * own at once. While the LISTEN connection is down nothing is cached (`setTrusted(false)`), and a lookup
 * that raced an invalidation is not stored (generation check), so a revoked key can never come back from
 * memory. Unknown tokens are never cached, so a new key works at once and guessing cannot fill memory.
 */
export function createKeyCache<V = KeyWithTeam>(opts: {
  load: (key: string) => Promise<V | undefined>;
  /** Upper bound on an entry's age even without notifications. Default 60 s. */
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}): KeyCache<V> {
  const ttlMs = opts.ttlMs ?? 60_000;
  const maxEntries = opts.maxEntries ?? 10_000;
  const now = opts.now ?? Date.now;
  const entries = new Map<string, { value: V; storedAt: number }>();
  let generation = 0;
  let trusted = false;

  return {
    async find(key) {
      const hit = entries.get(key);
      if (hit && now() - hit.storedAt < ttlMs) return hit.value;
      if (hit) entries.delete(key);
      const before = generation;
      const value = await opts.load(key);
      if (value !== undefined && trusted && generation === before) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(key, { value, storedAt: now() });
      }
      return value;
    },
    invalidate() {
      generation++;
      entries.clear();
    },
    setTrusted(value) {
      generation++;
      entries.clear();
      trusted = value;
    },
    size: () => entries.size,
  };
}
