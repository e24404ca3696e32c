import { Resolver } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

/**
 * A `net` lookup that asks the given DNS servers (`host` or `host:port`) for A and AAAA records instead of
 * the system resolver, for deployments with their own resolvers and for tests with a local DNS server.
 * Each lookup asks afresh: a fresh resolver per call keeps no cache, so what is checked is what was
 * answered. NXDOMAIN is `ENOTFOUND`, a name with neither record `ENODATA`.
 */
export function createResolverLookup(options: { servers: string[]; timeoutMs: number }): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    const resolver = new Resolver({ timeout: options.timeoutMs, tries: 1 });
    if (options.servers.length > 0) resolver.setServers(options.servers);
    const family =
      lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : (lookupOptions.family ?? 0);
    const v4 = family === 6 ? Promise.resolve([]) : resolver.resolve4(hostname);
    const v6 = family === 4 ? Promise.resolve([]) : resolver.resolve6(hostname);
    void Promise.allSettled([v4, v6]).then(([a, aaaa]) => {
      const addresses: LookupAddress[] = [
        ...(a?.status === 'fulfilled' ? a.value.map((address) => ({ address, family: 4 })) : []),
        ...(aaaa?.status === 'fulfilled' ? aaaa.value.map((address) => ({ address, family: 6 })) : []),
      ];
      const first = addresses[0];
      if (!first) {
        callback(firstError(hostname, [a, aaaa]), lookupOptions.all ? [] : '');
      } else if (lookupOptions.all) {
        callback(null, addresses);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

/** The more telling failure: a real error (NXDOMAIN, SERVFAIL, timeout) over "no record of this type". */
function firstError(hostname: string, results: (PromiseSettledResult<string[]> | undefined)[]): NodeJS.ErrnoException {
  const errors = results.flatMap((r) => (r?.status === 'rejected' ? [r.reason as NodeJS.ErrnoException] : []));
  const telling = errors.find((e) => e.code !== 'ENODATA') ?? errors[0];
  if (telling) return telling;
  return Object.assign(new Error(`no address for ${hostname}`), { code: 'ENODATA', hostname });
}
