import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import type { afterAll as AfterAll, beforeAll as BeforeAll } from '@jest/globals';
import { SERVICE_NAMES, type ServiceName } from '@postline/contracts';
import { startDnsServer, type DnsServer } from './dns.ts';
import { startSinkMx, type SinkMx, type SinkMxOptions } from './mx.ts';
import { startForwardingDns, type ForwardingDns } from './shared-dns.ts';
import { startSystem, type System } from './system.ts';
import { validateApiResponses } from './api-validation.ts';

/**
 * What a test file sees of a system it shares with other files: where to call it and how it was
 * configured. It cannot stop, kill or restart a service (a file that needs to keeps a private system).
 */
export type SharedSystem = Pick<System, 'apiUrl' | 'smtp' | 'env' | 'admin'> & {
  /** Each service's own HTTP address (for what a test asks a service directly). */
  services: Record<ServiceName, { url: string }>;
};

/** The variables a file may ask of its shared system; files asking the same values share one system. */
export type SharedSystemEnv = {
  /** Retry and expiry schedules shrunk by this factor (default 1). */
  POSTLINE_DELAY_SCALE?: string;
  /** `true`: the development inbox keeps every message (the sender's DEV_INBOX). */
  DEV_INBOX?: string;
};

/** Where the control channel of the run's shared systems listens; set by jest's global setup. */
const CONTROL = 'POSTLINE_SHARED_SYSTEMS';

type Described = Omit<SharedSystem, 'admin'> & { mxPort: number };

/**
 * The run's shared systems, in jest's main process (global setup): one per distinct SharedSystemEnv,
 * started when a file first asks for it and stopped at global teardown. All of them resolve DNS through
 * one forwarding server to which files register their own DNS servers, and deliver to port `mxPort`,
 * which every file's sink MX listens on at its own loopback address.
 */
export async function startSharedSystems(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dns: ForwardingDns = await startForwardingDns();
  // Holds the MX port on 127.0.0.1 so that no other socket takes it; sinks bind it on other 127.x addresses.
  const mxHolder = createTcpServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => mxHolder.listen(0, '127.0.0.1', resolve));
  const mxPort = (mxHolder.address() as AddressInfo).port;
  const systems = new Map<string, Promise<System>>();

  const systemFor = (env: SharedSystemEnv): Promise<System> => {
    const key = JSON.stringify(Object.entries(env).sort());
    let system = systems.get(key);
    if (!system) {
      system = startSystem({
        RATE_LIMIT_PER_SECOND: '1000',
        PUBLIC_LINK_RATE_LIMIT_PER_SECOND: '10',
        // Every browser test signs in from 127.0.0.1; together they pass the default 30 attempts per address
        // in 15 minutes. The limit itself is tested on gateways of its own (accounts, members).
        SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000',
        ALLOW_PRIVATE_NETWORK_TARGETS: 'true',
        DNS_SERVERS: dns.address,
        // The forwarding server waits up to 1.5 s for the test files' servers, each in a jest worker that may
        // be busy for a moment; a lookup that times out reads as a DNS failure (SPF temperror, say).
        DNS_TIMEOUT_MS: '2000',
        MX_DELIVERY_PORT: String(mxPort),
        ...env,
      });
      systems.set(key, system);
      system.catch(() => systems.delete(key));
    }
    return system;
  };

  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const answer = async (): Promise<unknown> => {
        const input = (body ? JSON.parse(body) : {}) as { env?: SharedSystemEnv; address?: string; args?: string[] };
        if (req.url === '/system') {
          const system = await systemFor(input.env ?? {});
          const services = Object.fromEntries(SERVICE_NAMES.map((name) => [name, { url: system.services[name].url }]));
          return { apiUrl: system.apiUrl, smtp: system.smtp, env: system.env, services, mxPort };
        }
        // The admin CLI's commands run here, in the system's one kept-loaded admin process.
        if (req.url === '/admin' && input.args) return (await systemFor(input.env ?? {})).admin(...input.args);
        if (req.url === '/dns/register' && input.address) return dns.register(input.address);
        if (req.url === '/dns/unregister' && input.address) return dns.unregister(input.address);
        throw new Error(`unknown request ${req.url}`);
      };
      answer().then(
        (value) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value ?? {})),
        (err: unknown) => res.writeHead(500).end(err instanceof Error ? (err.stack ?? err.message) : String(err)),
      );
    });
  });
  // The workers keep their connections between files: never closed from this side, so a file's first call
  // cannot meet a connection closing under it.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async stop() {
      server.close();
      const started = await Promise.allSettled(systems.values());
      await Promise.all(started.flatMap((s) => (s.status === 'fulfilled' ? [s.value.stop()] : [])));
      await dns.close();
      await new Promise<void>((resolve) => mxHolder.close(() => resolve()));
    },
  };
}

export function sharedSystemsUrl(url: string): Record<string, string> {
  return { [CONTROL]: url };
}

async function control<T>(path: string, body: unknown): Promise<T> {
  const base = process.env[CONTROL];
  if (!base) throw new Error(`${CONTROL} is not set: run the tests through jest's global setup (npm test)`);
  const post = () => fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify(body) });
  // A kept-alive connection the control server closed just as it was reused fails before the request is
  // read, so the call is made again once (an admin command too: the first was never read).
  const res = await post().catch((err: unknown) => {
    if (err instanceof TypeError && /other side closed|ECONNRESET/.test(String((err as { cause?: unknown }).cause))) {
      return post();
    }
    throw err;
  });
  if (!res.ok) throw new Error(`shared system ${path}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** A domain name no other test file uses (`<prefix>-<random>.test`), for a file on a shared system. */
export function uniqueDomain(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}.test`;
}

/** A file's view of a shared system, with the outside world of its own. */
export type FileSystem = {
  system: SharedSystem;
  /** This file's DNS server: the shared system resolves through it (and the other files' servers). */
  dns: DnsServer;
  /** This file's sink MX, on a loopback address of its own; `rcptDomain`'s MX points at it. */
  sink: SinkMx;
  /** A recipient domain of this file's own, delivered to `sink`. */
  rcptDomain: string;
};

/**
 * Gives a test file a shared system (started once per jest run for each distinct `env`), with its own DNS
 * server registered with the system's resolver and its own sink MX for its own recipient domain. The
 * returned object is filled in by a `beforeAll` (read it inside hooks and tests), and its DNS server and
 * sink are closed by an `afterAll`. The file isolates itself by data: its own team (`system.admin('team',
 * 'create', …)`), its own domains and addresses.
 *
 * @example
 * const world = useSystem({ sink: { behaviour: defaultSinkBehaviour } });
 * beforeAll(async () => {
 *   ({ system, dns, sink } = world);
 * });
 */
export function useSystem(
  opts: {
    env?: SharedSystemEnv;
    sink?: Omit<SinkMxOptions, 'host' | 'port'>;
    /** The file's recipient domain (default a new `uniqueDomain('rcpt')`). */
    rcptDomain?: string;
  } = {},
): FileSystem {
  // jest's hooks as the test environment's globals: importing @jest/globals here would break the scripts
  // (benchmarks) that import this package outside jest.
  const { beforeAll, afterAll } = globalThis as unknown as { beforeAll: typeof BeforeAll; afterAll: typeof AfterAll };
  const world = {} as FileSystem;
  beforeAll(async () => {
    const { mxPort, ...described } = await control<Described>('/system', { env: opts.env ?? {} });
    const env = opts.env ?? {};
    world.system = { ...described, admin: (...args) => control('/admin', { env, args }) };
    // Every response the tests then receive from this API is checked against the OpenAPI document.
    validateApiResponses(described.apiUrl);
    world.dns = await startDnsServer();
    world.sink = await startSinkOnOwnAddress(mxPort, opts.sink ?? {});
    world.rcptDomain = opts.rcptDomain ?? uniqueDomain('rcpt');
    world.dns.set(world.rcptDomain, [{ type: 'MX', exchange: `mx1.${world.rcptDomain}`, priority: 10 }]);
    world.dns.set(`mx1.${world.rcptDomain}`, [{ type: 'A', address: world.sink.host }]);
    await control('/dns/register', { address: world.dns.address });
  }, 120_000);
  afterAll(async () => {
    if (world.dns) await control('/dns/unregister', { address: world.dns.address });
    await Promise.all([world.sink?.close(), world.dns?.close()]);
  }, 30_000);
  return world;
}

/** A sink MX on `port` at a random 127.x.y.z of its own (Linux routes all of 127/8 to loopback). */
async function startSinkOnOwnAddress(port: number, options: SinkMxOptions): Promise<SinkMx> {
  for (let attempt = 0; ; attempt++) {
    const [a, b, c] = randomBytes(3);
    const host = `127.${((a ?? 0) % 250) + 2}.${b ?? 0}.${((c ?? 0) % 250) + 2}`;
    try {
      return await startSinkMx({ ...options, host, port });
    } catch (err) {
      if (attempt > 20 || (err as { code?: string }).code !== 'EADDRINUSE') throw err;
    }
  }
}
