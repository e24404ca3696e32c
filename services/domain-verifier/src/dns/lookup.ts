import { promises as dns, type CaaRecord } from 'node:dns';
import type { CaaAnswer, CnameAnswer, Lookup, MxAnswer, TxtAnswer } from '../domain/verification.ts';

export type DnsLookup = {
  txt: (name: string) => Promise<Lookup<TxtAnswer>>;
  mx: (name: string) => Promise<Lookup<MxAnswer>>;
  cname: (name: string) => Promise<Lookup<CnameAnswer>>;
  /** The CAA set at `name` (a recursive resolver follows a CNAME there, as RFC 8659 §3 asks). */
  caa: (name: string) => Promise<Lookup<CaaAnswer>>;
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
      if (DEFINITIVE.has(code))
        return { ok: false, reason: 'missing', detail: code === dns.NOTFOUND ? 'NXDOMAIN' : 'no records of this type' };
      return { ok: false, reason: 'temporary', detail: `DNS lookup failed (${code})` };
    }
  }

  return {
    txt: (name) => ask(() => resolver.resolveTxt(name)),
    mx: (name) => ask(() => resolver.resolveMx(name)),
    cname: (name) => ask(() => resolver.resolveCname(name)),
    caa: (name) => ask(async () => (await resolver.resolveCaa(name)).map(caaAnswer)),
  };
}

/**
 * Node gives `{ critical, type: 'CAA', <tag>: value }` (`critical` is the flags octet, whose issuer-critical
 * bit is 128, RFC 8659 §4.1).
 */
function caaAnswer(record: CaaRecord): CaaAnswer {
  const { critical, type: _type, ...property } = record as unknown as Record<string, unknown> & { critical: number };
  const [tag = '', value = ''] = Object.entries(property)[0] ?? [];
  return { critical: (critical & 128) !== 0, tag, value: String(value) };
}
