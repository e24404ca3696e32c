import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { createWaitList } from './wait.ts';

export type ReceivedDelivery = {
  /** Milliseconds since the epoch when the request arrived. */
  at: number;
  path: string;
  headers: Record<string, string>;
  /** The exact bytes received, as text. */
  body: string;
  /** Parsed body. */
  json: { type: string; created_at: string; data: Record<string, unknown> };
};

/** How to answer a request: a status (and body), a delay, a redirect, hang forever, or stream a large body. */
export type Reply =
  | { status: number; body?: string; delayMs?: number; headers?: Record<string, string> }
  | { hang: true }
  | { stream: number /* bytes */; status?: number };

export type WebhookReceiver = {
  url: string;
  deliveries: ReceivedDelivery[];
  /** Decides each reply; `n` counts this receiver's requests from 1. Default: 200 `{"ok":true}`. */
  reply: (fn: (delivery: ReceivedDelivery, n: number) => Reply) => void;
  waitFor: (what: string, match: (d: ReceivedDelivery[]) => boolean, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
};

/**
 * A local HTTP endpoint standing in for a customer's webhook receiver (real sockets, 127.0.0.1).
 * `verifyDelivery` checks a delivery the way receivers do: the public `standardwebhooks` package on the
 * `webhook-*` headers and the `svix` package on the `svix-*` headers.
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const deliveries: ReceivedDelivery[] = [];
  const waits = createWaitList();
  let decide: (delivery: ReceivedDelivery, n: number) => Reply = () => ({ status: 200, body: '{"ok":true}' });
  const hanging = new Set<ServerResponse>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: ReceivedDelivery['json'];
      try {
        json = JSON.parse(body) as ReceivedDelivery['json'];
      } catch {
        json = { type: '', created_at: '', data: {} };
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
      );
      const delivery: ReceivedDelivery = { at: Date.now(), path: req.url ?? '/', headers, body, json };
      deliveries.push(delivery);
      waits.notify();
      answer(res, decide(delivery, deliveries.length));
    });
  });

  function answer(res: ServerResponse, reply: Reply): void {
    if ('hang' in reply) {
      hanging.add(res);
      return;
    }
    if ('stream' in reply) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let left = reply.stream;
      const pump = () => {
        while (left > 0) {
          left -= chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
      return;
    }
    const send = () => {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body ?? '');
    };
    if (reply.delayMs) setTimeout(send, reply.delayMs);
    else send();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries,
    reply: (fn) => void (decide = fn),
    // 45 s: on a shared system, the events other files caused just before (thousands, from the fuzzer) are
    // in the dispatcher's queue ahead of this file's, and the machine runs two test files at once.
    async waitFor(what, match, timeoutMs = 45_000) {
      await waits.until(
        what,
        () => (match(deliveries) ? true : undefined),
        timeoutMs,
        () => `${deliveries.length} deliveries received`,
      );
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Whether a delivery verifies with `secret` under both header sets, as a receiver would check it
 * (signature over the raw body, timestamp within 5 minutes of `now`).
 */
export function verifyDelivery(delivery: ReceivedDelivery, secret: string): boolean {
  const h = delivery.headers;
  try {
    new StandardWebhook(secret).verify(delivery.body, {
      'webhook-id': h['webhook-id'] ?? '',
      'webhook-timestamp': h['webhook-timestamp'] ?? '',
      'webhook-signature': h['webhook-signature'] ?? '',
    });
    new SvixWebhook(secret).verify(delivery.body, {
      'svix-id': h['svix-id'] ?? '',
      'svix-timestamp': h['svix-timestamp'] ?? '',
      'svix-signature': h['svix-signature'] ?? '',
    });
    return true;
  } catch {
    return false;
  }
}
