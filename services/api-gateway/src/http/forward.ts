import type { RequestHandler, Response } from 'express';
import { ApiError, IDEMPOTENCY_HEADER, KEY_DOMAIN_HEADER, KEY_HEADER, PERMISSION_HEADER, TEAM_HEADER, type Logger } from '@postline/platform';
import { ownerOf, type Owner } from '../domain/routes.ts';
import { authOf, setLoggedResponseBody } from './context.ts';

export type Owners = Record<Owner, string>;

const PASS_HEADERS = ['x-batch-validation', 'x-resend-batch-validation', 'user-agent', 'x-request-id'];
const FORWARD_TIMEOUT_MS = 30_000;

export type Forwarded = { status: number; contentType: string; body: Buffer };

export type ForwardHooks = {
  /** Called just before the request leaves for the owner: from here on the owner may act on it. */
  onForwarding?: (res: Response) => void;
  /** Called with the owner's answer before it is sent (idempotency stores it). */
  onResponse?: (res: Response, answer: Forwarded) => Promise<void>;
  /** Called when the owner provably never got the request (connection refused). */
  onNotReached?: (res: Response) => Promise<void>;
};

/** Network failures that prove the request never reached the owner. */
const NOT_REACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function networkCode(err: unknown): string | undefined {
  const e = err as { name?: string; cause?: { code?: string; name?: string } } | null;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'TIMEOUT';
  return e?.cause?.code ?? (e?.name === 'TypeError' && e.cause ? 'NETWORK' : undefined);
}

/** Forwards each resource family to its owning service's internal HTTP API with the team attached. */
export function forwardToOwners(deps: { owners: Owners; logger: Logger; hooks?: ForwardHooks }): RequestHandler {
  return async (req, res, next) => {
    const owner = ownerOf(req.path);
    if (!owner) return next();
    // The URL as the owner will see it (dot segments resolved) must still be in the same family, so that
    // `/emails/../metrics` cannot reach an owner's other routes.
    const target = new URL(req.originalUrl, deps.owners[owner]);
    if (ownerOf(target.pathname) !== owner) return next();
    const auth = authOf(res);
    const headers: Record<string, string> = {
      [TEAM_HEADER]: auth.teamId,
      [KEY_HEADER]: auth.keyId,
      [PERMISSION_HEADER]: auth.permission,
      accept: 'application/json',
    };
    if (auth.domainId) headers[KEY_DOMAIN_HEADER] = auth.domainId;
    const idemKey = req.header('idempotency-key');
    if (idemKey) headers[IDEMPOTENCY_HEADER] = idemKey;
    for (const h of PASS_HEADERS) {
      const v = req.header(h);
      if (v) headers[h] = v;
    }
    const hasBody = !['GET', 'HEAD'].includes(req.method) && (req.method !== 'DELETE' || req.body !== undefined);
    if (hasBody) headers['content-type'] = 'application/json';

    let answer: Forwarded;
    deps.hooks?.onForwarding?.(res);
    try {
      const r = await fetch(target, {
        method: req.method,
        headers,
        body: hasBody ? JSON.stringify(req.body ?? {}) : undefined,
        redirect: 'manual',
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
      answer = {
        status: r.status,
        contentType: r.headers.get('content-type') ?? 'application/json; charset=utf-8',
        body: Buffer.from(await r.arrayBuffer()),
      };
    } catch (err) {
      const code = networkCode(err);
      if (code === undefined) throw err;
      req.log.error({ err, owner, code }, 'owner did not answer');
      if (NOT_REACHED.has(code)) await deps.hooks?.onNotReached?.(res);
      throw new ApiError(503, 'service_unavailable', 'The service is temporarily unavailable. Please try again later.');
    }
    await deps.hooks?.onResponse?.(res, answer);
    sendForwarded(res, answer);
  };
}
export function sendForwarded(res: Response, answer: Forwarded): void {
  try {
    setLoggedResponseBody(res, JSON.parse(answer.body.toString('utf8')));
  } catch {
    setLoggedResponseBody(res, null);
  }
  res.status(answer.status).setHeader('content-type', answer.contentType);
  res.end(answer.body);
}
