import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import express from 'express';
import { ApiError, errorHandler } from '@postline/platform';
import { tlsAskRoutes, type TlsAskDeps } from './tls-ask.ts';

let server: Server | undefined;
afterEach(() => {
  server?.close();
});

/** The ask on its own, with the sender's answer and the counter stood in for; returns what it looked up. */
async function start(
  deps: Partial<TlsAskDeps>,
): Promise<{ ask: (query: string) => Promise<Response>; asked: string[] }> {
  const asked: string[] = [];
  const app = express()
    // The runtime's request logger, silent: a 503 is logged as an error.
    .use((req, _res, next) => {
      Object.assign(req, { log: { error: () => undefined, warn: () => undefined } });
      next();
    })
    .use(
      tlsAskRoutes({
        isTrackingHost: (host) => {
          asked.push(host);
          return Promise.resolve(host === 'links.example.com');
        },
        publicBaseUrl: 'http://localhost:3000',
        countRequest: () => Promise.resolve({ count: 1, resetMs: 500 }),
        redisPrefix: 'test',
        perSecond: 10,
        ...deps,
      }),
    )
    .use(errorHandler);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { ask: (query) => fetch(`${base}/internal/tls-ask${query}`), asked };
}

describe('the TLS ask', () => {
  it('allows PUBLIC_BASE_URL’s host only when it is https, without asking the sender', async () => {
    const https = await start({ publicBaseUrl: 'https://Mail.Example.org/' });
    const answer = await https.ask('?domain=mail.example.org');
    expect([answer.status, await answer.json()]).toEqual([200, { domain: 'mail.example.org' }]);
    expect(https.asked).toEqual([]);
    server?.close();
    const http = await start({ publicBaseUrl: 'http://mail.example.org' });
    expect((await http.ask('?domain=mail.example.org')).status).toBe(404);
    expect(http.asked).toEqual(['mail.example.org']);
  });

  it('counts and looks up only host names, and refuses past the limit before asking the sender', async () => {
    const counted: string[] = [];
    const { ask, asked } = await start({
      countRequest: (key) => {
        counted.push(key);
        return Promise.resolve({ count: counted.length, resetMs: 400 });
      },
      perSecond: 1,
    });
    expect((await ask('?domain=10.0.0.1')).status).toBe(422);
    expect((await ask('?domain=links.example.com')).status).toBe(200);
    const refused = await ask('?domain=links.example.com');
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '1']);
    expect(counted).toEqual(['test:ratelimit:tls-ask', 'test:ratelimit:tls-ask']);
    expect(asked).toEqual(['links.example.com']);
  });

  it('answers 503 when the sender cannot say, and lets the ask through when Redis cannot count', async () => {
    const down = await start({
      isTrackingHost: () => Promise.reject(new ApiError(503, 'service_unavailable', 'down')),
    });
    expect((await down.ask('?domain=links.example.com')).status).toBe(503);
    server?.close();
    const noRedis = await start({ countRequest: () => Promise.resolve(undefined) });
    expect((await noRedis.ask('?domain=links.example.com')).status).toBe(200);
  });
});
