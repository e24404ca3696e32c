// AUTH failures per client (limited per IP, with a lockout, against password guessing). The password is an
// API key, so a client that keeps guessing is refused for a while once it has failed `maxFailures` times
// within `windowMs`, without the gateway being asked. A success does not clear earlier failures: a client
// holding one valid key could otherwise interleave it to keep guessing others. IPv6 clients are counted
// per /64 (one host usually holds a whole /64 and can change address within it at will).
import ipaddr from 'ipaddr.js';

export type AuthFailureLimitOptions = {
  /** Failures within `windowMs` that lock the client out. */
  maxFailures: number;
  windowMs: number;
  /** How long the lockout lasts, from the failure that caused it. */
  lockoutMs: number;
  /** Clients remembered at most (the oldest are forgotten first), so many addresses cannot exhaust memory. */
  maxClients?: number;
};

export type AuthFailureLimit = {
  /** Whether `ip` is locked out at `now`. */
  lockedOut: (ip: string, now: Date) => boolean;
  /** Records a failure of `ip`; true when it is locked out from now on. */
  recordFailure: (ip: string, now: Date) => boolean;
};

type Client = { failures: number[]; lockedUntil: number };

const DEFAULT_MAX_CLIENTS = 100_000;

export function createAuthFailureLimit(options: AuthFailureLimitOptions): AuthFailureLimit {
  const maxClients = options.maxClients ?? DEFAULT_MAX_CLIENTS;
  const clients = new Map<string, Client>();

  function current(key: string, at: number): Client | undefined {
    const client = clients.get(key);
    if (!client) return undefined;
    client.failures = client.failures.filter((time) => time > at - options.windowMs);
    if (client.failures.length === 0 && client.lockedUntil <= at) {
      clients.delete(key);
      return undefined;
    }
    return client;
  }

  return {
    lockedOut(ip, now) {
      const client = current(clientKeyOf(ip), now.getTime());
      return client !== undefined && client.lockedUntil > now.getTime();
    },
    recordFailure(ip, now) {
      const at = now.getTime();
      const key = clientKeyOf(ip);
      const client = current(key, at) ?? { failures: [], lockedUntil: 0 };
      client.failures.push(at);
      if (client.failures.length >= options.maxFailures)
        client.lockedUntil = Math.max(client.lockedUntil, at + options.lockoutMs);
      // Re-inserted last: the Map's order is then the order of last failure, oldest first.
      clients.delete(key);
      clients.set(key, client);
      while (clients.size > maxClients) clients.delete(clients.keys().next().value as string);
      return client.lockedUntil > at;
    },
  };
}

/** The unit a client is counted by: its IPv4 address (also when IPv4-mapped), or its IPv6 /64. */
export function clientKeyOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.parse(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}
