// SSRF matrix (loopback, private, link-local, CGNAT, ULA, IPv4-mapped, decimal and short forms): every spelling of an
// internal target is refused by the save-time URL check where it can be seen in the URL, and by the delivery client on
// its own, without a request (or, for pre-dial checks, even a TCP connection) reaching the local receivers. The same
// receivers are reachable with allowPrivate, which shows the refusals come from the guard.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startDnsServer, waitFor, type DnsServer } from '@postline/testing';
import { Agent, request } from 'undici';
import { createGuardedConnector, BlockedAddressError } from '../src/webhook-http/guarded-connect.ts';
import { createWebhookClient, type WebhookClient } from '../src/webhook-http/http-client.ts';
import { createResolverLookup } from '../src/webhook-http/resolver-lookup.ts';
import { checkEndpointUrl } from '../src/webhook-http/url-policy.ts';

type Receiver = {
  port: number;
  connections: number;
  requests: number;
  bytes: number;
  open: Set<net.Socket>;
  close: () => Promise<void>;
};

/** An HTTP receiver on a loopback address that counts TCP connections, requests and bytes. */
async function startReceiver(
  host: string,
  respond: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<Receiver> {
  const server = http.createServer((req, res) => {
    receiver.requests++;
    respond(req, res);
  });
  const receiver: Receiver = {
    port: 0,
    connections: 0,
    requests: 0,
    bytes: 0,
    open: new Set(),
    close: () => closeServer(server, receiver.open),
  };
  server.on('connection', (socket) => countConnection(receiver, socket));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}

/** A raw TCP receiver: sees a connection and every byte (a TLS ClientHello included) and never answers. */
async function startRawReceiver(): Promise<Receiver> {
  const server = net.createServer();
  const receiver: Receiver = {
    port: 0,
    connections: 0,
    requests: 0,
    bytes: 0,
    open: new Set(),
    close: () => closeServer(server, receiver.open),
  };
  server.on('connection', (socket) => countConnection(receiver, socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  return receiver;
}

function countConnection(receiver: Receiver, socket: net.Socket) {
  receiver.connections++;
  receiver.open.add(socket);
  socket.on('data', (chunk: Buffer) => (receiver.bytes += chunk.length));
  socket.on('close', () => receiver.open.delete(socket));
}

function closeServer(server: net.Server, sockets: Set<net.Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Waits until the receiver has no open connection, so every byte the client sent has been counted. */
async function settled(receiver: Receiver) {
  await waitFor('every connection to the receiver to close', () => receiver.open.size === 0, 1000);
}

const PRIVATE = 'The `endpoint` must not point to a private, loopback or reserved address.';
const ok = (_req: http.IncomingMessage, res: http.ServerResponse) => res.end('reached');

let v4: Receiver;
let v6: Receiver;
let dns: DnsServer;
let lookup: ReturnType<typeof createResolverLookup>;
let strict: WebhookClient;
let open: WebhookClient;

beforeAll(async () => {
  v4 = await startReceiver('127.0.0.1', ok);
  v6 = await startReceiver('::1', ok);
  dns = await startDnsServer();
  dns.set('loopback.customer.test', [{ type: 'A', address: '127.0.0.1' }]);
  dns.set('v6-loopback.customer.test', [{ type: 'AAAA', address: '::1' }]);
  // dns2 encodes only the hex form of an IPv4-mapped address correctly; resolvers return ::ffff:127.0.0.1.
  dns.set('mapped.customer.test', [{ type: 'AAAA', address: '::ffff:7f00:1' }]);
  dns.set('metadata.customer.test', [{ type: 'A', address: '169.254.169.254' }]);
  dns.set('private.customer.test', [{ type: 'A', address: '10.1.2.3' }]);
  dns.set('mixed.customer.test', [
    { type: 'A', address: '93.184.216.34' },
    { type: 'A', address: '127.0.0.1' },
  ]);
  lookup = createResolverLookup({ servers: [dns.address], timeoutMs: 1000 });
  strict = createWebhookClient({ allowPrivate: false, lookup, timeoutMs: 3000 });
  open = createWebhookClient({ allowPrivate: true, lookup, timeoutMs: 3000 });
});

afterAll(async () => {
  await strict.close();
  await open.close();
  await dns.close();
  await v4.close();
  await v6.close();
});

/** `{v4}` and `{v6}` stand for the ports of the two local receivers. */
type Target = { url: string; reaches: 'v4' | 'v6' | null };

const literalTargets: Target[] = [
  { url: 'http://127.0.0.1:{v4}/hook', reaches: 'v4' },
  { url: 'https://127.0.0.1:{v4}/hook', reaches: null },
  { url: 'http://10.0.0.1:{v4}/', reaches: null },
  { url: 'http://172.16.0.1:{v4}/', reaches: null },
  { url: 'http://192.168.1.1:{v4}/', reaches: null },
  { url: 'http://169.254.169.254/latest/meta-data', reaches: null },
  { url: 'http://100.64.0.1:{v4}/', reaches: null },
  { url: 'http://[::1]:{v6}/', reaches: 'v6' },
  { url: 'https://[fd00::1]/', reaches: null },
  { url: 'http://[fe80::1]:{v4}/', reaches: null },
  { url: 'http://[::ffff:127.0.0.1]:{v4}/', reaches: 'v4' },
  { url: 'http://[::ffff:7f00:1]:{v4}/', reaches: 'v4' },
  { url: 'http://[::ffff:169.254.169.254]/', reaches: null },
  { url: 'http://2130706433:{v4}/', reaches: 'v4' },
  { url: 'http://0x7f000001:{v4}/', reaches: 'v4' },
  { url: 'http://0177.0.0.1:{v4}/', reaches: 'v4' },
  { url: 'http://127.1:{v4}/', reaches: 'v4' },
  { url: 'http://１２７.０.０.１:{v4}/', reaches: 'v4' },
  { url: 'http://0.0.0.0:{v4}/', reaches: 'v4' },
  { url: 'http://[::]:{v6}/', reaches: 'v6' },
  { url: 'http://224.0.0.1:{v4}/', reaches: null },
  { url: 'http://255.255.255.255:{v4}/', reaches: null },
  { url: 'http://198.18.0.1:{v4}/', reaches: null },
  { url: 'http://[64:ff9b::7f00:1]:{v4}/', reaches: null },
  { url: 'http://[2002:7f00:1::]:{v4}/', reaches: null },
];

// Names the save-time check cannot judge (it does not resolve DNS); the local DNS server answers them.
const nameTargets: Target[] = [
  { url: 'http://loopback.customer.test:{v4}/', reaches: 'v4' },
  { url: 'https://loopback.customer.test:{v4}/', reaches: null },
  { url: 'http://v6-loopback.customer.test:{v6}/', reaches: 'v6' },
  { url: 'http://mapped.customer.test:{v4}/', reaches: 'v4' },
  { url: 'http://metadata.customer.test/latest/meta-data', reaches: null },
  { url: 'http://private.customer.test:{v4}/', reaches: null },
  { url: 'http://mixed.customer.test:{v4}/', reaches: null },
];

const fill = (url: string) => url.replace('{v4}', String(v4.port)).replace('{v6}', String(v6.port));
const receiverOf = (t: Target) => (t.reaches === 'v6' ? v6 : v4);

describe('the save-time URL check', () => {
  it.each(literalTargets.map((t) => t.url))('refuses %s', (url) => {
    const check = checkEndpointUrl(fill(url).replace(/^http:/, 'https:'), { allowPrivate: false });
    expect(check).toEqual({ ok: false, message: PRIVATE });
  });

  it.each([
    'file:///etc/passwd',
    'gopher://127.0.0.1:6379/_INFO',
    'ftp://hooks.customer.test/',
    'http://hooks.customer.test/',
  ])('refuses the scheme of %s', (url) => {
    expect(checkEndpointUrl(url, { allowPrivate: false })).toEqual({
      ok: false,
      message: 'The `endpoint` must use https.',
    });
  });

  it.each(nameTargets.map((t) => t.url))('passes the name in %s, which only DNS can judge', (url) => {
    const asSaved = new URL(fill(url));
    asSaved.protocol = 'https:';
    asSaved.port = '';
    expect(checkEndpointUrl(asSaved.href, { allowPrivate: false }).ok).toBe(true);
  });
});

describe('the delivery client on its own', () => {
  beforeEach(async () => {
    await settled(v4);
    await settled(v6);
  });

  it.each([...literalTargets, ...nameTargets].map((t) => t.url))(
    'refuses %s before opening a connection',
    async (url) => {
      const before = [v4.connections, v6.connections];
      const result = await strict.post(fill(url), '{"type":"email.sent"}', { 'content-type': 'application/json' });
      expect(result).toMatchObject({ ok: false, status: null, body: '', error: 'blocked_address' });
      expect(result.durationMs).toBeLessThan(1000);
      expect([v4.connections, v6.connections]).toEqual(before);
    },
  );

  it.each([
    'file:///etc/passwd',
    'gopher://127.0.0.1:{v4}/_INFO',
    'ftp://127.0.0.1:{v4}/',
    'http://user:pass@127.0.0.1:{v4}/',
  ])('refuses %s as an invalid request', async (url) => {
    const before = v4.connections;
    const result = await open.post(fill(url), 'x', {});
    expect(result).toMatchObject({ ok: false, status: null, error: 'invalid_request' });
    expect(v4.connections).toBe(before);
  });

  it('refuses a name that looked public when checked and resolves to loopback when dialed (DNS rebinding)', async () => {
    dns.set('rebind.customer.test', [{ type: 'A', address: '93.184.216.34' }]);
    // A "resolve, then check" validator would see this answer and let the endpoint through.
    const first = await new Promise<unknown>((resolve, reject) =>
      lookup('rebind.customer.test', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
    );
    expect(first).toEqual([{ address: '93.184.216.34', family: 4 }]);
    dns.set('rebind.customer.test', [{ type: 'A', address: '127.0.0.1' }]);

    const before = v4.connections;
    const result = await strict.post(`http://rebind.customer.test:${v4.port}/`, 'x', {});
    expect(result.error).toBe('blocked_address');
    expect(v4.connections).toBe(before);
  });

  it('does not follow a redirect to an internal target', async () => {
    const target = await startReceiver('127.0.0.1', ok);
    const redirector = await startReceiver('127.0.0.1', (_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/latest/meta-data` }).end('moved');
    });
    try {
      const result = await open.post(`http://127.0.0.1:${redirector.port}/hook`, 'x', {});
      expect(result).toMatchObject({ ok: false, status: 302, body: 'moved', error: 'redirect' });
      expect(redirector.requests).toBe(1);
      expect(target.connections).toBe(0);
    } finally {
      await redirector.close();
      await target.close();
    }
  });
});

describe('the connect-time check, with the DNS guard out of the way', () => {
  // An unguarded lookup stands for any path where the address dialed differs from the one checked.
  const unguarded = () => createGuardedConnector({ allowPrivate: false, lookup, timeoutMs: 1000 });

  it.each(['http:', 'https:'])(
    'closes a %s connection that reached loopback before writing a byte',
    async (protocol) => {
      const raw = await startRawReceiver();
      const agent = new Agent({ connect: unguarded() });
      dns.set('rebind-late.customer.test', [{ type: 'A', address: '127.0.0.1' }]);
      try {
        const outcome = await request(`${protocol}//rebind-late.customer.test:${raw.port}/`, {
          dispatcher: agent,
          method: 'POST',
          body: 'x',
        }).then(
          () => 'sent',
          (err: unknown) => err,
        );
        expect(outcome).toBeInstanceOf(BlockedAddressError);
        expect(outcome).toMatchObject({ code: 'ERR_BLOCKED_ADDRESS', address: '127.0.0.1', reason: 'loopback' });
        await settled(raw);
        expect(raw.connections).toBe(1);
        expect(raw.bytes).toBe(0);
      } finally {
        await agent.destroy();
        await raw.close();
      }
    },
  );

  it('refuses an IP literal without connecting, even when handed straight to the connector', async () => {
    const agent = new Agent({ connect: unguarded() });
    const before = v4.connections;
    try {
      const outcome = await request(`http://2130706433:${v4.port}/`, {
        dispatcher: agent,
        method: 'POST',
        body: 'x',
      }).then(
        () => 'sent',
        (err: unknown) => err,
      );
      expect(outcome).toBeInstanceOf(BlockedAddressError);
      expect(v4.connections).toBe(before);
    } finally {
      await agent.destroy();
    }
  });

  it('lets the same connection through when private targets are allowed', async () => {
    const raw = await startRawReceiver();
    const agent = new Agent({
      connect: createGuardedConnector({ allowPrivate: true, lookup, timeoutMs: 1000 }),
      headersTimeout: 200,
    });
    try {
      await request(`http://loopback.customer.test:${raw.port}/`, {
        dispatcher: agent,
        method: 'POST',
        body: 'x',
      }).catch(() => undefined);
      expect(raw.connections).toBe(1);
      expect(raw.bytes).toBeGreaterThan(0);
    } finally {
      await agent.destroy();
      await raw.close();
    }
  });
});

describe('with private targets allowed', () => {
  it.each([...literalTargets, ...nameTargets].filter((t) => t.reaches).map((t) => [t.url, t] as const))(
    '%s reaches the local receiver',
    async (_url, target) => {
      const receiver = receiverOf(target);
      const before = receiver.requests;
      const result = await open.post(fill(target.url), 'x', {});
      expect(result).toMatchObject({ ok: true, status: 200, body: 'reached' });
      expect(receiver.requests).toBe(before + 1);
    },
  );
});
