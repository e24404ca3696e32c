import http from 'node:http';
import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Router } from 'express';
import type { Logger } from '../logger/logger.ts';
import { createSlots } from '../concurrency/slots.ts';
import { isDatabaseUnavailable } from '../db/db.ts';
import { ApiError } from '../errors/errors.ts';
import type { Metrics } from './metrics.ts';

export type ReadinessCheck = () => Promise<boolean> | boolean;

export type HttpAppOptions = {
  logger: Logger;
  metrics: Metrics;
  /** Named dependency checks for /readyz; any false (or a shutdown in progress) answers 503. */
  readiness: Record<string, ReadinessCheck>;
  /** JSON bodies larger than this are refused with 413 (default 50 MB). */
  bodyLimitBytes?: number;
  /** Routes whose JSON bodies may exceed `bodyLimitBytes`, parsed a few at a time (see LargeBody). */
  largeBodies?: readonly LargeBody[];
  /** Mount the service's routes; runs after the common middleware and before the 404/error handlers. */
  routes: (app: Express) => void;
  /** Runs before the JSON body parser (the gateway authenticates and rate-limits first). */
  before?: (app: Express) => void;
};

export type HttpApp = { app: Express; setShuttingDown: () => void };

/**
 * A route whose JSON body may be up to `limitBytes`. A body above the app's usual limit (or of unknown
 * length) waits for one of `maxConcurrent` slots before it is read, so that a process holds only that many
 * such bodies (and their parsed values, several times their size) at once.
 */
export type LargeBody = { method: string; path: string; limitBytes: number; maxConcurrent: number };

const DEFAULT_BODY_LIMIT_BYTES = 50 * 1024 * 1024;
const JSON_TYPES = ['application/json', 'application/*+json'];

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

/**
 * The express 5 app every service uses: request ids, per-request child logger, HTTP latency metric,
 * JSON bodies, /healthz, /readyz, /metrics, then the service's routes, a JSON 404 and the one error
 * middleware that answers every error as `{statusCode, name, message}`.
 */
export function createHttpApp(opts: HttpAppOptions): HttpApp {
  const app = express();
  let shuttingDown = false;
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const incoming = req.header('x-request-id');
    req.id = incoming && incoming.length <= 128 ? incoming : randomUUID();
    res.setHeader('x-request-id', req.id);
    req.log = opts.logger.child({ request_id: req.id });
    const end = opts.metrics.httpDuration.startTimer();
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      end({
        method: req.method,
        route: route ? `${req.baseUrl}${route}` : 'unmatched',
        status: String(res.statusCode),
      });
    });
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks: Record<string, boolean> = {};
    await Promise.all(
      Object.entries(opts.readiness).map(async ([name, check]) => {
        checks[name] = await withinDeadline(check, READINESS_TIMEOUT_MS);
      }),
    );
    const ready = !shuttingDown && Object.values(checks).every(Boolean);
    res.status(ready ? 200 : 503).json({ ready, shutting_down: shuttingDown, checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', opts.metrics.registry.contentType);
    res.send(await opts.metrics.registry.metrics());
  });

  opts.before?.(app);
  app.use(jsonBodies(opts.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES, opts.largeBodies ?? []));
  app.use(refuseUnpairedSurrogates);
  opts.routes(app);
  app.use(notFoundHandler);
  app.use(errorHandler);
  return {
    app,
    setShuttingDown: () => {
      shuttingDown = true;
    },
  };
}

/** A dependency check that has not answered by then counts as down, so /readyz never hangs on one. */
const READINESS_TIMEOUT_MS = 2_000;

async function withinDeadline(check: ReadinessCheck, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  try {
    return await Promise.race([
      Promise.resolve()
        .then(check)
        .then(Boolean, () => false),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** express.json with the usual limit, and for the large-body routes their own limit behind their slots. */
function jsonBodies(limitBytes: number, large: readonly LargeBody[]): RequestHandler {
  const usual = express.json({ limit: limitBytes, type: JSON_TYPES });
  const routes = large.map((route) => ({
    route,
    parse: express.json({ limit: route.limitBytes, type: JSON_TYPES }),
    slots: createSlots(route.maxConcurrent),
  }));
  return (req, res, next) => {
    const match = routes.find(({ route }) => route.method === req.method && route.path === req.path);
    const length = Number(req.headers['content-length']);
    if (!match || (Number.isFinite(length) && length <= limitBytes)) return usual(req, res, next);
    void match.slots.acquire().then((release) => {
      // Held until the answer is sent (or the client goes): the parsed body lives that long.
      res.once('close', release);
      match.parse(req, res, next);
    });
  };
}

/**
 * JSON may escape half of a UTF-16 surrogate pair (`"\ud83d"`, an emoji cut by a client's `slice`), and
 * Postgres refuses such a string in text and jsonb alike: a 422 naming the field, before any handler, so
 * that it is never a 500 (nor, in a batch, a failed statement).
 */
export const refuseUnpairedSurrogates: RequestHandler = (req, _res, next) => {
  const at = unpairedSurrogateAt(req.body);
  if (at === undefined) return next();
  next(
    new ApiError(
      422,
      'validation_error',
      `Invalid \`${at || 'body'}\` field: it contains an unpaired UTF-16 surrogate, which is not valid Unicode.`,
    ),
  );
};

/** The path (`emails[2].subject`, `''` for the value itself) of the first string that is not well-formed UTF-16. */
export function unpairedSurrogateAt(value: unknown): string | undefined {
  // Iterative, so that deeply nested JSON cannot exhaust the stack.
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string];
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return path;
    } else if (Array.isArray(v)) {
      // Numbers are skipped without a push: an attachment may come as millions of bytes.
      for (let i = v.length - 1; i >= 0; i--)
        if (typeof v[i] === 'string' || typeof v[i] === 'object') stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i] as [string, unknown];
        if (!k.isWellFormed()) return path ? `${path}.<key>` : '<key>';
        stack.push([child, path ? `${path}.${k}` : k]);
      }
    }
  }
  return undefined;
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ApiError(404, 'not_found', `Route ${req.method} ${req.path} not found`));
};

/** Maps every error to `{statusCode, name, message}`. A client mistake is never a 500. */
export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  const apiError = toApiError(err);
  if (apiError.statusCode >= 500) req.log.error({ err }, 'request failed');
  // Too late for a JSON answer: express's default handler closes the connection.
  if (res.headersSent) return _next(err);
  for (const [k, v] of Object.entries(apiError.headers)) res.setHeader(k, v);
  res.status(apiError.statusCode).json(apiError.toBody());
};

const BODY_PARSER_ERRORS: Record<string, [number, string]> = {
  'entity.parse.failed': [400, 'The request body is not valid JSON.'],
  'entity.too.large': [413, 'The request body is too large.'],
  'encoding.unsupported': [415, 'Unsupported request body encoding.'],
  'charset.unsupported': [415, 'Unsupported request body encoding.'],
  'request.aborted': [400, 'The request was aborted.'],
};

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // body-parser errors carry a `type` and an HTTP status.
  const e = err as { type?: string; status?: number; statusCode?: number } | null;
  const parserError = e?.type ? BODY_PARSER_ERRORS[e.type] : undefined;
  if (parserError) return new ApiError(parserError[0], 'validation_error', parserError[1]);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    // Postgres refused the characters of a value the client sent (NUL, bad encoding).
    if (code === '22021' || code === '22P05') {
      return new ApiError(422, 'validation_error', 'The request contains characters that cannot be stored.');
    }
  }
  // Our own dependency is down: a temporary condition, not a bug.
  if (isDatabaseUnavailable(err)) {
    return new ApiError(503, 'service_unavailable', 'The service is temporarily unavailable. Please try again later.');
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError(status, 'validation_error', 'The request could not be processed.');
  }
  return new ApiError(
    500,
    'application_error',
    'Internal server error. We are unable to process your request right now, please try again later.',
  );
}

type Handlers = Partial<Record<'get' | 'post' | 'patch' | 'put' | 'delete', RequestHandler>>;

/**
 * Registers the handlers of one path and answers 405 `method_not_allowed` (with `allow`) for any other
 * method on it.
 */
export function route(router: Router, path: string, handlers: Handlers): void {
  const methods = Object.keys(handlers) as (keyof Handlers)[];
  for (const m of methods) {
    const h = handlers[m];
    if (h) router[m](path, h);
  }
  const allow = methods.map((m) => m.toUpperCase()).join(', ');
  router.all(path, (_req, res) => {
    res.setHeader('allow', allow);
    res
      .status(405)
      .json({ statusCode: 405, name: 'method_not_allowed', message: `Method not allowed. Allowed: ${allow}` });
  });
}

export type Listening = { server: http.Server; port: number; stop: (timeoutMs: number) => Promise<void> };

/** Starts the HTTP server; `stop` stops accepting, lets in-flight requests finish, then cuts the rest. */
export async function listen(app: Express, port: number, host = '0.0.0.0'): Promise<Listening> {
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  return {
    server,
    port: actual,
    stop: (timeoutMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.closeAllConnections();
        }, timeoutMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
