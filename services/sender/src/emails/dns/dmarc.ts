// Whether a domain publishes a DMARC record (RFC 7489 §6.6.3): a TXT record starting `v=DMARC1` at
// `_dmarc.<domain>`, else at `_dmarc.<organisational domain>`. Through the resolvers the MTA uses.
import { Resolver } from 'node:dns/promises';
import { getDomain } from 'tldts';

/** true or false as DNS answered; null when it did not (a timeout, a failing server). */
export type DmarcLookup = (domain: string) => Promise<boolean | null>;

const CACHE_MS = 5 * 60_000;
const CACHE_ENTRIES = 10_000;

export function createDmarcLookup(options: { servers: string[]; timeoutMs: number }): DmarcLookup {
  const resolver = new Resolver({ timeout: options.timeoutMs, tries: 1 });
  if (options.servers.length > 0) resolver.setServers(options.servers);

  async function publishes(name: string): Promise<boolean | null> {
    try {
      const records = await resolver.resolveTxt(`_dmarc.${name}`);
      return records.some((parts) => /^v=DMARC1\s*(;|$)/i.test(parts.join('')));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENODATA' || code === 'ENOTFOUND' ? false : null;
    }
  }

  // An answer is kept for a few minutes: a page of insights is opened again and again for the same domain.
  const known = new Map<string, { at: number; value: boolean }>();
  const lookup = async (domain: string): Promise<boolean | null> => {
    const own = await publishes(domain);
    if (own !== false) return own;
    const organisational = getDomain(domain);
    return organisational && organisational !== domain ? publishes(organisational) : false;
  };
  return async (domain) => {
    const cached = known.get(domain);
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.value;
    const value = await lookup(domain);
    if (value !== null) {
      if (known.size >= CACHE_ENTRIES) known.clear();
      known.set(domain, { at: Date.now(), value });
    }
    return value;
  };
}
