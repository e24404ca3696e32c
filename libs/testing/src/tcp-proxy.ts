import { fork, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type Socket } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';

export type CutMode = 'refuse' | 'blackhole';

export type TcpProxy = {
  /** The port the proxy listens on, on 127.0.0.1. */
  port: number;
  /** `target` as seen through the proxy: the same URL with this host and port. */
  url: (target: string) => string;
  /**
   * Cuts the dependency: every open connection is reset, and until `restore` a new one is either reset
   * at once (`refuse`, what a stopped server or a closed port looks like) or accepted and never answered
   * (`blackhole`, a network that drops packets).
   */
  cut: (mode?: CutMode) => Promise<void>;
  /** Accepts and forwards new connections again. */
  restore: () => Promise<void>;
  /** Connections forwarded since the start (the count rises as clients reconnect). */
  connections: () => Promise<number>;
  close: () => Promise<void>;
};

type Request = { cmd: 'cut'; mode: CutMode } | { cmd: 'restore' | 'count' };
type Command = Request & { id: number };
type Reply = { id: number; count?: number } | { listening: number };

/**
 * A TCP proxy on 127.0.0.1 to `targetHost:targetPort` that a test can cut, for Postgres, RabbitMQ or Redis
 * outages without touching the shared servers: the services connect through it, the test cuts and restores.
 * It runs in a child process of its own, so that it keeps forwarding while the test's process is blocked
 * (startSystem runs the migrations and the admin CLI synchronously, through the proxy).
 *
 * @example
 * const pgProxy = await startTcpProxy(5432);
 * const system = await startSystem({ DATABASE_URL: pgProxy.url(databaseUrl) });
 * await pgProxy.cut(); // ... the outage ...
 * await pgProxy.restore();
 */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const child = fork(fileURLToPath(import.meta.url), [targetHost, String(targetPort)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, (reply: { count?: number }) => void>();
  let nextId = 0;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`tcp proxy exited (${code}) before listening`)));
    child.on('message', (reply: Reply) => {
      if ('listening' in reply) return resolve(reply.listening);
      pending.get(reply.id)?.(reply);
      pending.delete(reply.id);
    });
  });
  const ask = (command: Request) =>
    new Promise<{ count?: number }>((resolve, reject) => {
      if (!child.connected) return reject(new Error('tcp proxy is gone'));
      const id = nextId++;
      pending.set(id, resolve);
      child.send({ ...command, id });
    });

  return {
    port,
    url(target) {
      const u = new URL(target);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut: async (mode = 'refuse') => void (await ask({ cmd: 'cut', mode })),
    restore: async () => void (await ask({ cmd: 'restore' })),
    connections: async () => (await ask({ cmd: 'count' })).count ?? 0,
    close: () => stopChild(child),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** The proxy itself, in the child process: forwards until told to cut, answers each command when done. */
function runProxy(targetHost: string, targetPort: number): void {
  let mode: 'open' | CutMode = 'open';
  let forwarded = 0;
  const open = new Set<Socket>();
  const resetAll = () => {
    for (const socket of [...open]) socket.resetAndDestroy();
  };

  const server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => undefined);
    if (mode === 'refuse') return void client.resetAndDestroy();
    // Held without an answer until the client gives up, or the proxy is restored and resets it.
    if (mode === 'blackhole') return;
    forwarded++;
    const upstream = createConnection({ host: targetHost, port: targetPort });
    open.add(upstream);
    upstream.on('close', () => {
      open.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ listening: typeof address === 'object' && address ? address.port : 0 });
  });
  process.on('message', (command: Command) => {
    if (command.cmd === 'cut') {
      mode = command.mode;
      resetAll();
    } else if (command.cmd === 'restore') {
      // Connections a blackhole held never reached the target: reset them so that their clients retry.
      if (mode === 'blackhole') resetAll();
      mode = 'open';
    }
    process.send?.({ id: command.id, count: forwarded });
  });
  // The test's process went away without closing us.
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => {
    resetAll();
    server.close(() => process.exit(0));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runProxy(process.argv[2] ?? '127.0.0.1', Number(process.argv[3]));
}
