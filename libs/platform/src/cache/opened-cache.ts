/**
 * The opened form of sealed values, kept by the sealed value itself: a webhook secret opened from its
 * ciphertext, a DKIM key object from its PEM. Sealed values are immutable (a rotation seals a new one),
 * so an entry never goes stale. A throwing `open` caches nothing; at `maxEntries` the cache is emptied.
 */
export function createOpenedCache<T>(open: (sealed: string) => T, maxEntries: number): (sealed: string) => T {
  const opened = new Map<string, T>();
  return (sealed) => {
    const found = opened.get(sealed);
    if (found !== undefined) return found;
    const value = open(sealed);
    if (opened.size >= maxEntries) opened.clear();
    opened.set(sealed, value);
    return value;
  };
}
