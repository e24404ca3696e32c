// The webhook HTTP client against local receivers over real sockets: what counts as success, how much of a
// response is kept, timeouts, failures by kind, and the per-origin connection bound.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startDnsServer, waitFor, type DnsServer } from '@postline/testing';
import { createWebhookClient, type WebhookClient, type WebhookClientOptions } from '../src/webhook-http/http-client.ts';
import { createResolverLookup } from '../src/webhook-http/resolver-lookup.ts';

// A self-signed test certificate (P-256, valid to 2126) for 127.0.0.1, ::1, localhost and *.customer.test.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgr6rfHNfeWdoo4oO0
Y0wUUZVLzrZjCgx7ltR1F0KqQ0ihRANCAARjFXky1gKhJaVAvxSACie/2jMGRniI
Mnpm2t+WPS/cwNYy8/LFGJoTzgc4FrcvCeCOzqnbtagpyL7ujylbuKlq
-----END PRIVATE KEY-----`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIB2jCCAYCgAwIBAgIUIiJubu5GsCa0oFH0ctQB91YhSMYwCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWUG9zdGxpbmUgdGVzdCByZWNlaXZlcjAgFw0yNjExMjEwNzQ2
MjJaGA8yMTI2MTAyODA3NDYyMlowITEfMB0GA1UEAwwWUG9zdGxpbmUgdGVzdCBy
ZWNlaXZlcjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABGMVeTLWAqElpUC/FIAK
J7/aMwZGeIgyemba35Y9L9zA1jLz8sUYmhPOBzgWty8J4I7Oqdu1qCnIvu6PKVu4
qWqjgZMwgZAwHQYDVR0OBBYEFEANx6DI4Cv5hhXB1ysUYuN85Xh4MB8GA1UdIwQY
MBaAFEANx6DI4Cv5hhXB1ysUYuN85Xh4MA8GA1UdEwEB/wQFMAMBAf8wPQYDVR0R
BDYwNIcEfwAAAYcQAAAAAAAAAAAAAAAAAAAAAYIJbG9jYWxob3N0gg8qLmN1c3Rv
bWVyLnRlc3QwCgYIKoZIzj0EAwIDSAAwRQIhAJRhzBHQsDZItfR1mpaqES8OXxhY
91Zp0429UGDR6WGpAiBQe0g3wit93W71oeEtzxLCJSc9FflMQc1ILw0/kHCGZA==
-----END CERTIFICATE-----`;

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer };
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void;
type Receiver = {
  url: string;
  port: number;
  seen: Seen[];
  connections: number;
  active: number;
  maxActive: number;
  sockets: Set<Socket>;
  close: () => Promise<void>;
};

/** A receiver over a real socket that records each request (raw body bytes included) and then calls `handle`. */
async function startReceiver(handle: Handler, tls = false): Promise<Receiver> {
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    receiver.active++;
    receiver.maxActive = Math.max(receiver.maxActive, receiver.active);
    res.on('close', () => receiver.active--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      receiver.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handle(req, res, body);
    });
  };
  const server = tls ? https.createServer({ key: TEST_KEY, cert: TEST_CERT }, onRequest) : http.createServer(onRequest);
  const receiver: Receiver = {
    url: '',
    port: 0,
    seen: [],
    connections: 0,
    active: 0,
    maxActive: 0,
    sockets: new Set(),
    close: () => {
      for (const socket of receiver.sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    receiver.connections++;
    receiver.sockets.add(socket);
    socket.on('close', () => receiver.sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `${tls ? 'https' : 'http'}://127.0.0.1:${receiver.port}`;
  return receiver;
}

const receivers: Receiver[] = [];
const clients: WebhookClient[] = [];
async function receiver(handle: Handler, tls = false) {
  const r = await startReceiver(handle, tls);
  receivers.push(r);
  return r;
}
function client(options: Partial<WebhookClientOptions> = {}) {
  const c = createWebhookClient({ allowPrivate: true, timeoutMs: 2000, ...options });
  clients.push(c);
  return c;
}

let dns: DnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await dns.close();
});

describe('success and failure', () => {
  it('delivers the exact body bytes and headers and keeps the 2xx response body', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    const r2 = await receiver((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks ✓'));
    const body = '{"type":"email.sent","data":{"subject":"Zoë 🚀\\u2028"}}\n';
    const headers = {
      'content-type': 'application/json',
      'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
      'webhook-timestamp': '1731916800',
      'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    };

    const noContent = await client().post(`${r.url}/hooks?x=1`, body, headers);
    expect(noContent).toMatchObject({ ok: true, status: 204, body: '' });
    expect(noContent.error).toBeUndefined();
    const seen = r.seen[0];
    expect(seen?.method).toBe('POST');
    expect(seen?.url).toBe('/hooks?x=1');
    expect(seen?.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(seen?.headers).toMatchObject({ ...headers, 'content-length': String(Buffer.byteLength(body)) });

    expect(await client().post(r2.url, body, headers)).toMatchObject({ ok: true, status: 200, body: 'thanks ✓' });
  });

  it('fails a 500 and keeps the first 4 KB of its body', async () => {
    const page = 'x'.repeat(4000) + 'é'.repeat(3000);
    const r = await receiver((_req, res) => res.writeHead(500).end(page));
    const result = await client().post(r.url, 'x', {});
    expect(result).toMatchObject({ ok: false, status: 500, error: 'status' });
    expect(result.body).toBe('x'.repeat(4000) + 'é'.repeat(48)); // 4000 + 48 × 2 bytes
  });

  it('fails a 410 and a 429 with their status, for the caller to disable or throttle', async () => {
    const r = await receiver((req, res) =>
      res.writeHead(req.url === '/gone' ? 410 : 429, { 'retry-after': '30' }).end(),
    );
    expect(await client().post(`${r.url}/gone`, 'x', {})).toMatchObject({ ok: false, status: 410, error: 'status' });
    expect(await client().post(`${r.url}/busy`, 'x', {})).toMatchObject({ ok: false, status: 429, error: 'status' });
  });

  it('does not follow a 3xx', async () => {
    const target = await receiver((_req, res) => res.end('followed'));
    const r = await receiver((_req, res) =>
      res.writeHead(307, { location: `${target.url}/elsewhere` }).end('see elsewhere'),
    );
    const result = await client().post(r.url, 'x', {});
    expect(result).toMatchObject({ ok: false, status: 307, body: 'see elsewhere', error: 'redirect' });
    expect(target.connections).toBe(0);
  });

  it('keeps a body with NUL bytes as U+FFFD, which Postgres text can store', async () => {
    const r = await receiver((_req, res) => res.end(Buffer.from([0x6f, 0x6b, 0x00, 0x21, 0x00])));
    expect(await client().post(r.url, 'x', {})).toMatchObject({ ok: true, status: 200, body: 'ok\uFFFD!\uFFFD' });
  });

  it('keeps at most maxBodyBytes', async () => {
    const r = await receiver((_req, res) => res.end('abcdefghij'));
    expect((await client({ maxBodyBytes: 4 }).post(r.url, 'x', {})).body).toBe('abcd');
    expect(await client({ maxBodyBytes: 0 }).post(r.url, 'x', {})).toMatchObject({ ok: true, body: '' });
  });
});

describe('time and size limits', () => {
  it('times out a receiver that never answers', async () => {
    const r = await receiver(() => undefined);
    const result = await client({ timeoutMs: 300 }).post(r.url, 'x', {});
    expect(result).toMatchObject({ ok: false, status: null, error: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(1500);
  });

  it('counts a 2xx whose body then stalls as delivered, and returns by the deadline', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200);
      res.write('accepted, still thinking');
    });
    const result = await client({ timeoutMs: 300 }).post(r.url, 'x', {});
    expect(result).toMatchObject({ ok: true, status: 200, body: 'accepted, still thinking' });
    expect(result.durationMs).toBeLessThan(1500);
  });

  it('reads 4 KB of an endless 2xx body, then hangs up', async () => {
    let written = 0;
    let hungUp = false;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = () => {
        while (!res.destroyed && written < 1024 ** 3) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      res.on('close', () => (hungUp = true));
      pump();
    });
    const result = await client({ timeoutMs: 5000 }).post(r.url, 'x', {});
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(result.body).toBe('a'.repeat(4096));
    expect(result.durationMs).toBeLessThan(1000);
    await waitFor('the client to hang up', () => hungUp, 1000);
    // What the kernel's socket buffers absorbed before the hang-up, nowhere near the 1 GB on offer.
    expect(written).toBeLessThan(64 * 1024 ** 2);
  });

  it('counts a 200 that announces 1 GB as delivered without reading it', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-length': String(1024 ** 3) });
      res.write('x'.repeat(10_000));
    });
    const result = await client().post(r.url, 'x', {});
    expect(result).toMatchObject({ ok: true, status: 200, body: 'x'.repeat(4096) });
    expect(result.durationMs).toBeLessThan(1000);
  });
});

describe('failures by kind', () => {
  it('reports a refused connection', async () => {
    const r = await startReceiver(() => undefined);
    const closedPort = r.port;
    await r.close();
    expect(await client().post(`http://127.0.0.1:${closedPort}/`, 'x', {})).toMatchObject({
      ok: false,
      status: null,
      error: 'refused',
    });
  });

  it('reports a name that does not resolve', async () => {
    const lookup = createResolverLookup({ servers: [dns.address], timeoutMs: 500 });
    expect(await client({ lookup }).post('https://nowhere.customer.test/', 'x', {})).toMatchObject({
      ok: false,
      status: null,
      error: 'dns',
    });
  });

  it('reports TLS failures: an untrusted certificate, and a receiver that does not speak TLS', async () => {
    const tls = await receiver((_req, res) => res.end('secret'), true);
    const plain = await receiver((_req, res) => res.end('plain'));
    expect(await client().post(tls.url, 'x', {})).toMatchObject({ ok: false, status: null, error: 'tls' });
    expect(await client().post(`https://127.0.0.1:${plain.port}/`, 'x', {})).toMatchObject({
      ok: false,
      status: null,
      error: 'tls',
    });
    expect(tls.seen).toHaveLength(0);
    expect(plain.seen).toHaveLength(0);
  });

  it('delivers over https to a trusted certificate, by address and by name', async () => {
    dns.set('hooks.customer.test', [{ type: 'A', address: '127.0.0.1' }]);
    const tls = await receiver((_req, res) => res.end('secure'), true);
    const c = client({ ca: TEST_CERT, lookup: createResolverLookup({ servers: [dns.address], timeoutMs: 500 }) });
    expect(await c.post(`${tls.url}/a`, 'x', {})).toMatchObject({ ok: true, status: 200, body: 'secure' });
    expect(await c.post(`https://hooks.customer.test:${tls.port}/b`, 'x', {})).toMatchObject({
      ok: true,
      status: 200,
      body: 'secure',
    });
    expect(tls.seen.map((s) => s.url)).toEqual(['/a', '/b']);
  });

  it('refuses a private receiver unless private targets are allowed', async () => {
    const r = await receiver((_req, res) => res.end('ok'));
    expect(await client({ allowPrivate: false }).post(r.url, 'x', {})).toMatchObject({
      ok: false,
      error: 'blocked_address',
    });
    expect(await client({ allowPrivate: true }).post(r.url, 'x', {})).toMatchObject({ ok: true, status: 200 });
    expect(r.seen).toHaveLength(1);
  });
});

describe('connections', () => {
  it('reuses one kept-alive connection for consecutive deliveries', async () => {
    const r = await receiver((_req, res) => res.end('ok'));
    const c = client();
    for (let i = 0; i < 3; i++) {
      expect(await c.post(r.url, `event ${i}`, {})).toMatchObject({ ok: true });
      // undici hands a finished socket back to the pool one event-loop turn later.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(r.seen).toHaveLength(3);
    expect(r.connections).toBe(1);
  });

  it('opens at most maxConnectionsPerOrigin to one slow endpoint and queues the rest', async () => {
    const r = await receiver((_req, res) => void setTimeout(() => res.end('ok'), 100));
    const c = client({ maxConnectionsPerOrigin: 2 });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => c.post(r.url, `event ${i}`, {})));
    expect(results.every((result) => result.ok)).toBe(true);
    expect(r.connections).toBe(2);
    expect(r.maxActive).toBe(2);
  });

  it('lets close() finish within the timeout while a receiver hangs', async () => {
    const r = await receiver(() => undefined);
    const c = createWebhookClient({ allowPrivate: true, timeoutMs: 300 });
    const pending = c.post(r.url, 'x', {});
    await waitFor('the request to reach the receiver', () => r.seen.length === 1);
    const started = Date.now();
    await c.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await pending).ok).toBe(false);
  });
});
