import net from 'node:net';

export type TcpProxy = {
  port: number;
  /** Destroys every proxied connection and stops listening: the target looks unreachable. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
};

/** A local TCP relay to `target`, to take a real server "offline" for one client without stopping it. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;

  const listen = async () => {
    const srv = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => resolve());
    });
    const address = srv.address();
    port = typeof address === 'object' && address ? address.port : port;
    server = srv;
  };

  const cut = async () => {
    const srv = server;
    server = undefined;
    for (const s of sockets) s.destroy();
    if (srv) await new Promise<void>((resolve) => srv.close(() => resolve()));
  };

  await listen();
  return {
    get port() {
      return port;
    },
    cut,
    restore: listen,
    close: cut,
  };
}
