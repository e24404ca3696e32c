// The MX's view of the domain read model: a burst of RCPTs for one domain must not query Postgres each time,
// and a domain whose verification changes must show the change within seconds.
import type { KnownDomain } from '../domain/recipient-routing.ts';

export type DomainLookup = (host: string) => Promise<readonly KnownDomain[]>;

/** Hosts remembered at most; past it the cache starts over (a flood of made-up domains cannot grow it). */
const MAX_HOSTS = 10_000;

/**
 * `lookup` through a cache of `ttlMs` per host (what it found, or that it found nothing). Concurrent
 * lookups of one host share one query; a failed query is not remembered.
 */
export function createDomainCache(lookup: DomainLookup, opts: { ttlMs: number; now?: () => number }): DomainLookup {
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { until: number; domains: Promise<readonly KnownDomain[]> }>();
  return (host) => {
    const hit = cache.get(host);
    if (hit && hit.until > now()) return hit.domains;
    if (cache.size >= MAX_HOSTS) cache.clear();
    const domains = lookup(host);
    const entry = { until: now() + opts.ttlMs, domains };
    cache.set(host, entry);
    domains.catch(() => {
      if (cache.get(host) === entry) cache.delete(host);
    });
    return domains;
  };
}
