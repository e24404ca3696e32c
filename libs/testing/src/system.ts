import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import amqp from 'amqplib';
import { SERVICE_NAMES, type ServiceName } from '@postline/contracts';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, uniqueName, type TestDatabase } from './db.ts';
import { infraFromEnv } from './infra.ts';
import { migrateSystem, systemTemplate } from './system-template.ts';
import { validateApiResponses } from './api-validation.ts';

/**
 * How long a started or restarted service may take to answer /readyz before the test fails: a ceiling for a
 * loaded 2-core machine running two jest workers and Chromium beside the services, not a performance target
 * (the chaos suite's full run holds restarts to 5 s).
 */
const READY_WITHIN_MS = 60_000;

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export type RunningService = { name: ServiceName; port: number; url: string; process: ChildProcess; output: string[] };

export type System = {
  apiUrl: string;
  /** The inbound-smtp's SMTP ports on 127.0.0.1: the MX, the relay with STARTTLS, the relay with implicit TLS. */
  smtp: { mx: number; relay: number; relayTls: number };
  services: Record<ServiceName, RunningService>;
  /**
   * The further replicas `startSystem`'s `replicas` option asked for, each on its own ports (the
   * inbound-smtp's SMTP ports too). The gateway forwards to the first replica of each owner; the others
   * share the work through the broker, as replicas behind a Service would.
   */
  replicas: RunningService[];
  env: NodeJS.ProcessEnv;
  /** Runs an admin CLI command against this system (the words after `npm run admin --`); its JSON line. */
  admin: (...args: string[]) => Promise<Record<string, string>>;
  /** SIGTERM one service and wait for its exit code. */
  terminate: (name: ServiceName) => Promise<number | null>;
  /**
   * SIGKILL one service at once (a crash: nothing of its own shutdown runs) and wait until it is gone.
   * Restart it before `stop`, which removes the queues the running services report.
   */
  kill: (name: ServiceName) => Promise<void>;
  /** Starts a stopped or killed service again, on the same port, and waits until it is ready. */
  restart: (name: ServiceName) => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * Every queue the running services report on /metrics (`broker_queue_messages{queue=…}`: consumer work
 * queues, their delay tiers and dead-letter queues), read before they stop so the queues can be removed.
 */
async function reportedQueues(urls: string[], prefix: string): Promise<string[]> {
  const names = new Set<string>();
  for (const url of urls) {
    try {
      const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      for (const match of text.matchAll(/broker_queue_messages\{[^}]*queue="([^"]+)"/g)) {
        if (match[1]?.startsWith(`${prefix}.`)) names.add(match[1]);
      }
    } catch {
      // a service that is already gone reports nothing
    }
  }
  return [...names];
}

/**
 * Removes what the services declared under a test prefix: queues (quorum queues are not free), exchanges.
 * A channel waits for each delete's answer before the next, so the queues are spread over a few channels.
 */
export async function deleteBrokerPrefix(url: string, prefix: string, queues: string[]): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const all = [...queues, `${prefix}.unroutable`];
    const lanes = Math.min(8, all.length);
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        const ch = await connection.createChannel();
        for (let i = lane; i < all.length; i += lanes) await ch.deleteQueue(all[i] as string);
        await ch.close();
      }),
    );
    const ch = await connection.createChannel();
    for (const ex of ['events', 'commands', 'unroutable']) await ch.deleteExchange(`${prefix}.${ex}`);
    await ch.close();
  } finally {
    await connection.close();
  }
}

/**
 * Ports handed to services, below Linux's ephemeral range (32768 and up), where the kernel picks the local
 * port of every outgoing connection and of every `listen(0)`: a port taken from there and released before the
 * service binds it may meanwhile go to another socket. Each jest worker (and jest's main process, which runs
 * the shared systems) draws from a block of its own, so the two workers never hand out the same port, and a
 * process never hands one out twice.
 */
const PORT_BLOCK = 5000;
const PORT_BASE = 10_000;
const handedOut = new Set<number>();

function portBlock(): { first: number; size: number } {
  const worker = Number(process.env.JEST_WORKER_ID ?? 0);
  // The main process: 10000-14999; workers 1, 2, 3: the next blocks, all below 30000.
  return { first: PORT_BASE + (worker % 4) * PORT_BLOCK, size: PORT_BLOCK };
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const { first, size } = portBlock();
  for (let tries = 0; tries < size; tries++) {
    const port = first + Math.floor(Math.random() * size);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port left in ${first}-${first + size - 1}`);
}

/** The admin CLI's commands against one system, kept loaded (services/api-gateway/test/admin-server.ts). */
export type AdminRunner = {
  /** Runs one command (the words after `npm run admin --`); resolves with its JSON line. */
  run: (args: string[]) => Promise<Record<string, string>>;
  stop: () => Promise<void>;
};

/**
 * One process that runs the admin CLI's commands against the system of `env`, started on its first command:
 * a test makes many teams, people and keys, and a Node start-up for each would cost a second of CPU.
 */
export function adminRunner(env: NodeJS.ProcessEnv): AdminRunner {
  let child: ChildProcess | undefined;
  let next = 0;
  let stderr = '';
  const waiting = new Map<
    number,
    { args: string[]; resolve: (line: Record<string, string>) => void; reject: (e: Error) => void }
  >();
  const fail = (why: string) => {
    for (const { args, reject } of waiting.values()) reject(new Error(`admin ${args.join(' ')} failed: ${why}`));
    waiting.clear();
    child = undefined;
  };
  const start = (): ChildProcess => {
    const started = spawn(process.execPath, [join(ROOT, 'services', 'api-gateway', 'test', 'admin-server.ts')], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // Anything else a command prints (a log line) is not an answer.
    createInterface({ input: started.stdout, crlfDelay: Infinity }).on('line', (text) => {
      let answer: { id?: number; line?: Record<string, string>; error?: string };
      try {
        answer = JSON.parse(text) as typeof answer;
      } catch {
        return;
      }
      if (answer.id === undefined) return;
      const call = waiting.get(answer.id);
      if (!call) return;
      waiting.delete(answer.id);
      if (answer.error !== undefined) call.reject(new Error(`admin ${call.args.join(' ')} failed: ${answer.error}`));
      else call.resolve(answer.line ?? {});
    });
    started.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    started.once('exit', (code, signal) => fail(`the admin process ended (${signal ?? code}): ${stderr}`));
    return started;
  };
  return {
    run(args) {
      child ??= start();
      const id = next++;
      const promise = new Promise<Record<string, string>>((resolve, reject) =>
        waiting.set(id, { args, resolve, reject }),
      );
      child.stdin!.write(`${JSON.stringify({ id, args })}\n`);
      return promise;
    },
    async stop() {
      const running = child;
      if (!running || running.exitCode !== null) return;
      await new Promise((resolve) => {
        running.once('exit', resolve);
        running.stdin!.end();
      });
    },
  };
}

/** Waits for /readyz: a started system has every dependency connected, not only its HTTP port open. */
async function waitReady(url: string, child: ChildProcess, output: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`service exited early:\n${output.join('')}`);
    try {
      const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      if (r.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`service at ${url} not ready in ${timeoutMs} ms:\n${output.join('')}`);
}

/**
 * The whole system as real processes (`node services/<svc>/src/main.ts`), on a fresh database, a unique
 * broker prefix and a unique Redis prefix, each service on a free port. For end-to-end tests.
 */
export async function startSystem(
  extraEnv: NodeJS.ProcessEnv = {},
  opts: { replicas?: Partial<Record<ServiceName, number>> } = {},
): Promise<System> {
  const infra = infraFromEnv();
  const ports = Object.fromEntries(
    await Promise.all(SERVICE_NAMES.map(async (n) => [n, await freePort()] as const)),
  ) as Record<ServiceName, number>;
  const url = (n: ServiceName) => `http://127.0.0.1:${ports[n]}`;
  const smtp = { mx: await freePort(), relay: await freePort(), relayTls: await freePort() };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    AMQP_URL: infra.amqpUrl,
    REDIS_URL: infra.redisUrl,
    BROKER_PREFIX: uniqueName('e2e'),
    REDIS_PREFIX: uniqueName('e2e'),
    POSTLINE_SECRET_KEY: 'e2e-secret-key-not-for-production',
    API_PORT: String(ports['api-gateway']),
    PUBLIC_BASE_URL: url('api-gateway'),
    SENDER_URL: url('sender'),
    INBOUND_SMTP_URL: url('inbound-smtp'),
    WEBHOOK_DISPATCHER_URL: url('webhook-dispatcher'),
    DOMAIN_VERIFIER_URL: url('domain-verifier'),
    API_GATEWAY_URL: url('api-gateway'),
    SMTP_MX_PORT: String(smtp.mx),
    SMTP_RELAY_PORT: String(smtp.relay),
    SMTP_RELAY_TLS_PORT: String(smtp.relayTls),
    SHUTDOWN_TIMEOUT_MS: '5000',
    // Two test files run at once, each beside the shared systems, within Postgres's 100 connections.
    DATABASE_POOL_SIZE: '4',
    // As the image sets it: a restarted service loads its modules' compiled code instead of compiling again.
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'postline-node-compile-cache'),
  };
  // A system on its own database starts from a copy of the migrated template; one given a DATABASE_URL
  // (through a proxy, say) is migrated there.
  const database: TestDatabase = extraEnv.DATABASE_URL
    ? await createTestDatabase('e2e')
    : await createTestDatabase('e2e', { template: await systemTemplate(infra.databaseUrl, env) });
  Object.assign(env, { DATABASE_URL: database.url }, extraEnv);
  if (extraEnv.DATABASE_URL) await migrateSystem(env);
  const services = {} as Record<ServiceName, RunningService>;
  const spawnProcess = (name: ServiceName, port: number, overrides: NodeJS.ProcessEnv = {}): RunningService => {
    const output: string[] = [];
    const child = spawn(process.execPath, [join(ROOT, 'services', name, 'src', 'main.ts')], {
      env: { ...env, HTTP_PORT: String(port), ...overrides },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => output.push(d.toString()));
    child.stderr.on('data', (d: Buffer) => output.push(d.toString()));
    return { name, port, url: `http://127.0.0.1:${port}`, process: child, output };
  };
  const spawnService = (name: ServiceName) => {
    services[name] = spawnProcess(name, ports[name]);
  };
  for (const name of SERVICE_NAMES) spawnService(name);
  const replicas: RunningService[] = [];
  for (const name of SERVICE_NAMES) {
    for (let i = 1; i < (opts.replicas?.[name] ?? 1); i++) {
      const port = await freePort();
      const own: NodeJS.ProcessEnv =
        name === 'api-gateway'
          ? { API_PORT: String(port) }
          : name === 'inbound-smtp'
            ? {
                SMTP_MX_PORT: String(await freePort()),
                SMTP_RELAY_PORT: String(await freePort()),
                SMTP_RELAY_TLS_PORT: String(await freePort()),
              }
            : {};
      replicas.push(spawnProcess(name, port, own));
    }
  }
  try {
    await Promise.all(
      [...Object.values(services), ...replicas].map((s) => waitReady(s.url, s.process, s.output, READY_WITHIN_MS)),
    );
  } catch (err) {
    // The queues the services that did start have declared go too (each quorum queue holds file handles).
    const started = [...Object.values(services), ...replicas];
    const declared = await reportedQueues(
      started.filter((s) => s.process.exitCode === null).map((s) => s.url),
      String(env.BROKER_PREFIX),
    );
    for (const s of started) s.process.kill('SIGKILL');
    await deleteBrokerPrefix(infra.amqpUrl, String(env.BROKER_PREFIX), declared).catch(() => undefined);
    await database.drop();
    throw err;
  }

  // Queues to remove at the end, noted from each service just before it stops.
  const queues = new Set<string>();
  const terminate = async (name: ServiceName, signal: NodeJS.Signals = 'SIGTERM') => {
    const child = services[name].process;
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    for (const queue of await reportedQueues([services[name].url], String(env.BROKER_PREFIX))) queues.add(queue);
    return new Promise<number | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill(signal);
    });
  };

  // Every response the tests then receive from this API is checked against the OpenAPI document.
  validateApiResponses(url('api-gateway'));
  const admin = adminRunner(env);
  return {
    apiUrl: url('api-gateway'),
    smtp: {
      mx: Number(env.SMTP_MX_PORT),
      relay: Number(env.SMTP_RELAY_PORT),
      relayTls: Number(env.SMTP_RELAY_TLS_PORT),
    },
    services,
    replicas,
    env,
    admin: (...args) => admin.run(args),
    terminate,
    async kill(name) {
      const child = services[name].process;
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGKILL');
      });
    },
    async restart(name) {
      const child = services[name].process;
      if (child.exitCode === null && child.signalCode === null) throw new Error(`${name} is still running`);
      spawnService(name);
      await waitReady(services[name].url, services[name].process, services[name].output, READY_WITHIN_MS);
    },
    async stop() {
      for (const replica of replicas) {
        const child = replica.process;
        if (child.exitCode !== null || child.signalCode !== null) continue;
        for (const queue of await reportedQueues([replica.url], String(env.BROKER_PREFIX))) queues.add(queue);
        await new Promise((resolve) => {
          child.once('exit', resolve);
          child.kill('SIGTERM');
        });
      }
      await Promise.all([admin.stop(), ...SERVICE_NAMES.map((n) => terminate(n))]);
      await Promise.all([database.drop(), deleteBrokerPrefix(infra.amqpUrl, String(env.BROKER_PREFIX), [...queues])]);
    },
  };
}
