import { isIP } from 'node:net';
import { Resolver } from 'node:dns/promises';
import type { BounceSubType } from '@postline/contracts';
import { checkTargetAddress, type SmtpReply } from '@postline/platform';
import { LOCAL_REPLIES, type LocalReply } from './replies.ts';

export type MxHost = { exchange: string; priority: number; addresses: string[] };

/** Where a domain's mail goes, as a value: hosts to try in order, or why there are none. */
export type MxResult =
  | { kind: 'hosts'; hosts: MxHost[] }
  | ({ kind: 'permanent'; subType: BounceSubType } & SmtpReply)
  | ({ kind: 'temporary' } & SmtpReply);

export type MxResolver = {
  resolve: (domain: string) => Promise<MxResult>;
  /** The answer kept for `domain`, without asking DNS: undefined when none is kept (or it is too old). */
  cached: (domain: string) => MxResult | undefined;
};

export type MxResolverOptions = {
  /** DNS servers as `ip` or `ip:port` (`[v6]:port`); empty for the system's resolvers. */
  servers: string[];
  /** Per-try timeout of each DNS query. */
  timeoutMs: number;
  /** Tries per query (default 2). */
  tries?: number;
  /** Keep private, loopback and other non-public addresses (local development and tests only). */
  allowPrivate: boolean;
  /** How long an answer is reused (default 60 s; 0 looks every domain up each time). */
  cacheMs?: number;
};

type Lookup<T> = { ok: true; value: T } | { ok: false; reason: 'nodata' | 'nxdomain' | 'temporary' };

/**
 * MX resolution per RFC 5321 §5.1 and RFC 7505 (null MX):
 * - MX hosts sorted by preference, equal preferences shuffled; each host's A then AAAA addresses.
 * - Null MX (`0 .`) → 556 5.1.10 at once, without looking anything else up.
 * - NXDOMAIN → 550 5.1.2; no MX records (NODATA) → implicit MX, the domain's own A/AAAA.
 * - SERVFAIL, timeout, refusal → 451 4.4.3 (retry).
 * - An exchange that is an IP literal or has no address is skipped; a host whose lookup fails temporarily
 *   is skipped while others work, and makes the result temporary when nothing else is usable.
 * - Non-public addresses (checkTargetAddress) are dropped unless allowPrivate; when that leaves nothing the
 *   result is 550 5.4.4 "refused by policy" (Permanent/General: the domain's DNS is wrong, the address may
 *   be fine, so it is not suppressed).
 */
export function createMxResolver(options: MxResolverOptions): MxResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs, tries: options.tries ?? 2 });
  if (options.servers.length > 0) resolver.setServers(options.servers);

  async function lookup<T>(query: () => Promise<T>): Promise<Lookup<T>> {
    try {
      return { ok: true, value: await query() };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code === 'ENODATA') return { ok: false, reason: 'nodata' };
      if (code === 'ENOTFOUND') return { ok: false, reason: 'nxdomain' };
      // ESERVFAIL, ETIMEOUT, EREFUSED, ECONNREFUSED and anything unexpected: a retry is cheap, a wrong
      // bounce is not.
      return { ok: false, reason: 'temporary' };
    }
  }

  /** A and AAAA of one name; `temporary` only when neither answered and at least one failed temporarily. */
  async function addressesOf(name: string): Promise<{ addresses: string[]; temporary: boolean; nxdomain: boolean }> {
    const [v4, v6] = await Promise.all([lookup(() => resolver.resolve4(name)), lookup(() => resolver.resolve6(name))]);
    const addresses = [...(v4.ok ? v4.value : []), ...(v6.ok ? v6.value : [])];
    const temporary = addresses.length === 0 && [v4, v6].some((r) => !r.ok && r.reason === 'temporary');
    const nxdomain = !v4.ok && v4.reason === 'nxdomain' && !v6.ok && v6.reason === 'nxdomain';
    return { addresses, temporary, nxdomain };
  }

  function permanent(reply: LocalReply, subType: BounceSubType, domain: string): MxResult {
    return {
      kind: 'permanent',
      code: reply.code,
      enhanced: reply.enhanced,
      text: `${reply.text} (${domain})`,
      subType,
    };
  }

  function temporary(domain: string, detail: string): MxResult {
    const reply = LOCAL_REPLIES.dnsTemporary;
    return {
      kind: 'temporary',
      code: reply.code,
      enhanced: reply.enhanced,
      text: `${reply.text} (${domain}: ${detail})`,
    };
  }

  // Answers (not temporary failures) are kept for CACHE_MS: a burst to one domain looks it up once.
  const cache = new Map<string, { at: number; result: MxResult }>();

  async function resolveUncached(domain: string): Promise<MxResult> {
    {
      const mx = await lookup(() => resolver.resolveMx(domain));
      if (!mx.ok && mx.reason === 'nxdomain') return permanent(LOCAL_REPLIES.noSuchDomain, 'NoEmail', domain);
      if (!mx.ok && mx.reason === 'temporary') return temporary(domain, 'MX lookup failed');

      let candidates: { exchange: string; priority: number }[];
      if (mx.ok && mx.value.length > 0) {
        // Node reports `MX 0 .` as exchange ''. Alone it is a null MX; mixed with real hosts (which RFC 7505
        // forbids) it is dropped, never dialed: nodemailer would turn an empty host into localhost.
        const real = mx.value.filter((r) => r.exchange !== '' && r.exchange !== '.');
        if (real.length === 0) return permanent(LOCAL_REPLIES.nullMx, 'NoEmail', domain);
        candidates = sortByPreference(real);
      } else {
        candidates = [{ exchange: domain, priority: 0 }]; // implicit MX
      }

      const resolved = await Promise.all(
        candidates.map(async (candidate) => {
          // An MX naming an IP literal is not a domain name (RFC 5321 §5.1): unusable.
          if (isIP(candidate.exchange.replace(/^\[|\]$/g, '')) !== 0)
            return { ...candidate, addresses: [], temporary: false, nxdomain: false };
          return { ...candidate, ...(await addressesOf(candidate.exchange)) };
        }),
      );

      const hosts: MxHost[] = [];
      let refused = 0;
      for (const host of resolved) {
        const allowed = host.addresses.filter(
          (ip) => checkTargetAddress(ip, { allowPrivate: options.allowPrivate }).ok,
        );
        refused += host.addresses.length - allowed.length;
        if (allowed.length > 0)
          hosts.push({ exchange: host.exchange.toLowerCase(), priority: host.priority, addresses: allowed });
      }
      if (hosts.length > 0) return { kind: 'hosts', hosts };
      if (resolved.some((h) => h.temporary)) return temporary(domain, 'address lookup of the mail hosts failed');
      if (refused > 0) return permanent(LOCAL_REPLIES.mxRefusedByPolicy, 'General', domain);
      if (!mx.ok) {
        // Implicit MX: NXDOMAIN between the two lookups is still "no such domain".
        return resolved[0]?.nxdomain
          ? permanent(LOCAL_REPLIES.noSuchDomain, 'NoEmail', domain)
          : permanent(LOCAL_REPLIES.noMailHost, 'NoEmail', domain);
      }
      return permanent(LOCAL_REPLIES.noUsableMx, 'General', domain);
    }
  }

  // Lookups under way, by domain: a burst of deliveries to a domain not in the cache asks once, instead of
  // sending the resolver three queries per delivery at the same instant (which a resolver may drop, and a
  // drop would defer every one of those deliveries by the first retry's 5 minutes).
  const pending = new Map<string, Promise<MxResult>>();

  /** Ties are shuffled again for every caller, as a fresh lookup would. */
  const own = (result: MxResult): MxResult =>
    result.kind === 'hosts' ? { kind: 'hosts', hosts: sortByPreference(result.hosts) } : result;

  const fresh = (key: string) => {
    const hit = cache.get(key);
    return hit && Date.now() - hit.at < (options.cacheMs ?? DEFAULT_CACHE_MS) ? own(hit.result) : undefined;
  };

  return {
    cached: (domain) => fresh(domain.toLowerCase()),
    async resolve(domain) {
      const key = domain.toLowerCase();
      const hit = fresh(key);
      if (hit) return hit;
      let lookup = pending.get(key);
      if (!lookup) {
        // The answer is cached before the lookup stops being pending, so a caller always finds one of them.
        lookup = resolveUncached(key)
          .then((result) => {
            if (result.kind !== 'temporary') {
              if (cache.size >= 10_000) cache.clear();
              cache.set(key, { at: Date.now(), result });
            }
            return result;
          })
          .finally(() => pending.delete(key));
        pending.set(key, lookup);
      }
      return own(await lookup);
    },
  };
}

const DEFAULT_CACHE_MS = 60_000;

/** Lowest preference first; hosts of equal preference in random order (RFC 5321 §5.1). */
function sortByPreference<T extends { priority: number }>(records: T[]): T[] {
  const shuffled = [...records];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  return shuffled.sort((a, b) => a.priority - b.priority); // stable: ties keep the shuffled order
}
