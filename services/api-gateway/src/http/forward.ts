import type { RequestHandler, Response } from 'express';
import { ApiError, TEAM_HEADER, type Logger } from '@postline/platform';
import { ownerOf, type Owner } from '../domain/routes.ts';
import { authOf, setLoggedResponseBody } from './context.ts';

export type Owners = Record<Owner, string>;

/** Headers an owner trusts: only the gateway can reach owners' internal ports (NetworkPolicy). */
export const KEY_HEADER = 'x-postline-api-key-id';
export const PERMISSION_HEADER = 'x-postline-key-permission';
export const KEY_DOMAIN_HEADER = 'x-postline-key-domain-id';
export const IDEMPOTENCY_HEADER = 'x-postline-idempotency-key';

const PASS_HEADERS = ['x-batch-validation', 'x-resend-batch-validation', 'user-agent', 'x-request-id'];
const FORWARD_TIMEOUT_MS = 30_000;

export type Forwarded = { status: number; contentType: string; body: Buffer };

export type ForwardHooks = {
  /** Called with the owner's answer before it is sent (idempotency stores it). */
  onResponse?: (res: Response, answer: Forwarded) => Promise<void>;
  /** Called when the owner could not be reached. */
  onUnreachable?: (res: Response) => Promise<void>;
};

/** Forwards each resource family to its owning service's internal HTTP API with the team attached. */
export function forwardToOwners(deps: { owners: Owners; logger: Logger; hooks?: ForwardHooks }): RequestHandler {
  return async (req, res, next) => {
    const owner = ownerOf(req.path);
    if (!owner) return next();
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
    const hasBody = !['GET', 'HEAD', 'DELETE'].includes(req.method) || (req.body !== undefined && Object.keys(req.body as object).length > 0);
    if (hasBody) headers['content-type'] = 'application/json';
    const target = new URL(req.originalUrl, deps.owners[owner]);

    let answer: Forwarded;
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
      req.log.error({ err, owner }, 'owner unreachable');
      await deps.hooks?.onUnreachable?.(res);
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
