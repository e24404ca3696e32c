import { lookup as systemLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import { BLOCKED_ADDRESS_CODE, createGuardedConnector, guardLookup } from './guarded-connect.ts';

/**
 * Why a POST did not succeed. `status` means a response arrived with a status other than 2xx or 3xx;
 * `invalid_request` is a URL or header undici refuses to send (not a network outcome, still a value).
 */
export type PostError =
  | 'timeout'
  | 'refused'
  | 'blocked_address'
  | 'tls'
  | 'redirect'
  | 'dns'
  | 'connection'
  | 'status'
  | 'invalid_request';

export type PostResult = {
  /** A 2xx status arrived in time. */
  ok: boolean;
  /** The response status, or null when no response arrived. */
  status: number | null;
  /** The first maxBodyBytes of the response body, as UTF-8 (a cut character and NUL become U+FFFD). */
  body: string;
  /** Set exactly when ok is false. */
  error?: PostError;
  durationMs: number;
};

export type WebhookClient = {
  /** POSTs `body` (sent as its UTF-8 bytes) with exactly these headers. Resolves for every network outcome. */
  post(url: string, body: string, headers: Record<string, string>): Promise<PostResult>;
  /** Lets in-flight requests finish for up to timeoutMs, then drops every connection. */
  close(): Promise<void>;
};

export type WebhookClientOptions = {
  /** Allow loopback, private and other non-public targets (development and tests only). */
  allowPrivate: boolean;
  /** Deadline for the whole exchange: queueing for a socket, connect, TLS, headers and body. */
  timeoutMs?: number;
  /** How much of the response body is kept; the rest is never read. */
  maxBodyBytes?: number;
  /** Deadline for TCP connect, and again for the TLS handshake. Default: min(timeoutMs, 10 s). */
  connectTimeoutMs?: number;
  /** Sockets per origin, so one slow endpoint cannot hold every connection. Further requests queue. */
  maxConnectionsPerOrigin?: number;
  /** Name resolution; the system resolver when absent. Every answer is checked (see guardLookup). */
  lookup?: LookupFunction;
  /** Trust anchors (PEM) that replace the system's roots: for tests and private CAs only. */
  ca?: string | string[];
};

/**
 * The HTTP client for customer-controlled webhook endpoints. Three guards, each enough on its own for the
 * cases it sees: an IP-literal host is checked before dialing, every DNS answer is checked before
 * connecting, and the address actually connected to is checked before anything is written (see
 * createGuardedConnector). Redirects are never followed: a 3xx is a failure (Standard Webhooks).
 *
 * The status decides the outcome. The body is read only for the record: up to maxBodyBytes, its end, or
 * the deadline, whichever comes first, and then the response is dropped. So a 2xx with a huge, endless or
 * stalled body is still a success, and post() never takes much longer than timeoutMs.
 *
 * @example
 * const client = createWebhookClient({ allowPrivate: false });
 * const result = await client.post(endpoint, payload, { 'content-type': 'application/json', ...signed });
 * if (!result.ok) scheduleRetry(result.error, result.status);
 */
export function createWebhookClient(options: WebhookClientOptions): WebhookClient {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const maxBodyBytes = options.maxBodyBytes ?? 4096;
  const guard = { allowPrivate: options.allowPrivate };
  const agent = new Agent({
    connect: createGuardedConnector({
      ...guard,
      lookup: guardLookup(options.lookup ?? systemLookup, guard),
      timeoutMs: options.connectTimeoutMs ?? Math.min(timeoutMs, 10_000),
      ...(options.ca ? { ca: options.ca } : {}),
    }),
    connections: options.maxConnectionsPerOrigin ?? 10,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  async function post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    const started = performance.now();
    const done = (result: Omit<PostResult, 'durationMs'>): PostResult => ({
      ...result,
      durationMs: Math.round(performance.now() - started),
    });

    const precheck = checkUrl(url);
    if (precheck) return done({ ok: false, status: null, body: '', error: precheck });

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    try {
      const response = await request(url, {
        dispatcher: agent,
        method: 'POST',
        headers,
        body,
        signal: deadline.signal,
      });
      const text = await readPrefix(response.body, maxBodyBytes);
      const status = response.statusCode;
      if (status >= 200 && status < 300) return done({ ok: true, status, body: text });
      return done({ ok: false, status, body: text, error: status >= 300 && status < 400 ? 'redirect' : 'status' });
    } catch (err) {
      return done({ ok: false, status: null, body: '', error: deadline.signal.aborted ? 'timeout' : classify(err) });
    } finally {
      clearTimeout(timer);
    }
  }

  async function close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      agent.close().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!closed) await agent.destroy();
  }

  return { post, close };
}

/** Refuses what must never be dispatched: a non-HTTP URL or one carrying credentials. */
function checkUrl(raw: string): PostError | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'invalid_request';
  }
  const http = url.protocol === 'https:' || url.protocol === 'http:';
  return http && url.username === '' && url.password === '' ? undefined : 'invalid_request';
}

/**
 * Reads at most `limit` bytes, then stops: destroying the stream aborts the response and closes its
 * socket, so an endless body costs one chunk of memory. A body that fails or stalls after the headers keeps
 * what was read; it does not change the outcome. (Events, not an async iterator: this runs for every POST.)
 */
function readPrefix(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      body.destroy();
      // Postgres text cannot hold U+0000, and the body is stored with the attempt: a receiver answering with
      // NUL bytes must not make its attempt unrecordable (and so retried for ever by the sweeper).
      resolve(Buffer.concat(chunks).subarray(0, limit).toString('utf8').replaceAll('\0', '\uFFFD'));
    };
    // A reset, the deadline or a body timeout mid-body keeps the prefix; destroying an unfinished body
    // emits an abort error that nobody else listens for.
    body.on('error', finish);
    if (limit <= 0) return finish();
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) finish();
    });
    body.on('end', finish);
    body.on('close', finish);
  });
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);
// node:dns error codes (c-ares and getaddrinfo). ECONNREFUSED and ETIMEOUT also come from dns when its
// servers cannot be reached, which the `syscall` tells apart.
const DNS_CODES = new Set([
  'ENOTFOUND',
  'ENODATA',
  'ESERVFAIL',
  'EREFUSED',
  'ETIMEOUT',
  'EAI_AGAIN',
  'EAI_FAIL',
  'ENONAME',
  'EBADNAME',
  'EBADRESP',
  'ECONNREFUSED',
  'EFORMERR',
  'ENOTIMP',
  'EBADQUERY',
  'EBADFAMILY',
  'ECANCELLED',
]);
// X.509 verification codes from OpenSSL as Node reports them.
const CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
]);

/** Classifies a failure by its code (and syscall for DNS), never by its message. */
function classify(err: unknown): PostError {
  const { code, syscall } = (err ?? {}) as { code?: unknown; syscall?: unknown };
  if (typeof code !== 'string') return 'connection';
  if (code === BLOCKED_ADDRESS_CODE) return 'blocked_address';
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  const fromDns = typeof syscall === 'string' && (syscall === 'getaddrinfo' || syscall.startsWith('query'));
  if (fromDns || (code !== 'ECONNREFUSED' && DNS_CODES.has(code))) return 'dns';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || code === 'EPROTO' || CERT_CODES.has(code))
    return 'tls';
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') return 'invalid_request';
  return 'connection';
}
