import { startDnsServer, type DnsServer } from './dns.ts';
import { startSinkMx, type SinkMx } from './mx.ts';
import { startSystem, type System } from './system.ts';

/**
 * The whole system delivering to a local sink MX: a local DNS server where `rcptDomain`'s MX is the sink,
 * and the services resolving through it, allowed to dial loopback, on the sink's port. `env` adds to or
 * overrides the system's environment; `opts` as startSystem's (replicas). The caller closes the three (system first).
 */
export async function startDeliveringSystem(
  rcptDomain: string,
  env: NodeJS.ProcessEnv = {},
  opts: Parameters<typeof startSystem>[1] = {},
): Promise<{ dns: DnsServer; sink: SinkMx; system: System }> {
  const dns = await startDnsServer();
  const sink = await startSinkMx();
  dns.set(rcptDomain, [{ type: 'MX', exchange: `mx1.${rcptDomain}`, priority: 10 }]);
  dns.set(`mx1.${rcptDomain}`, [{ type: 'A', address: '127.0.0.1' }]);
  try {
    const system = await startSystem(
      {
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: '300',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        MX_DELIVERY_PORT: String(sink.port),
        ...env,
      },
      opts,
    );
    return { dns, sink, system };
  } catch (err) {
    // A system that did not start leaves nothing open behind it (an open server keeps jest from exiting).
    await Promise.all([sink.close(), dns.close()]);
    throw err;
  }
}
