import { promises as dns } from 'node:dns';
import type { Lookup, MxAnswer, TxtAnswer } from '../domain/verification.ts';

export type DnsLookup = {
  txt: (name: string) => Promise<Lookup<TxtAnswer>>;
  mx: (name: string) => Promise<Lookup<MxAnswer>>;
};

/** Answers that prove the record does not exist; every other error (timeout, SERVFAIL, refused) is temporary. */
const DEFINITIVE = new Set<string>([dns.NODATA, dns.NOTFOUND]);

/**
 * Lookups through the resolvers in DNS_SERVERS (`host` or `host:port`; the system's when empty). Errors
 * come back as values: NXDOMAIN/NODATA is `missing`, anything else `temporary`, so a DNS outage never
 * fails a domain.
 */
export function createDnsLookup(opts: { servers: readonly string[]; timeoutMs: number }): DnsLookup {
  // tries: 2 → one retransmission per server before the query counts as timed out.
  const resolver = new dns.Resolver({ timeout: opts.timeoutMs, tries: 2 });
  if (opts.servers.length > 0) resolver.setServers([...opts.servers]);

  async function ask<T>(query: () => Promise<T[]>): Promise<Lookup<T>> {
    try {
      return { ok: true, answers: await query() };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'UNKNOWN';
      if (DEFINITIVE.has(code)) return { ok: false, reason: 'missing', detail: code === dns.NOTFOUND ? 'NXDOMAIN' : 'no records of this type' };
      return { ok: false, reason: 'temporary', detail: `DNS lookup failed (${code})` };
    }
  }

  return {
    txt: (name) => ask(() => resolver.resolveTxt(name)),
    mx: (name) => ask(() => resolver.resolveMx(name)),
  };
}
