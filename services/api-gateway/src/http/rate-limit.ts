import type { RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { ApiError, type Logger } from '@postline/platform';
import { isRateLimitExempt } from '../domain/routes.ts';
import { createWindowCounter, type WindowCount } from '../redis/window-counter.ts';
import { authOf } from './context.ts';

export type RateLimitDeps = { redis: Redis; prefix: string; defaultPerSecond: number; logger: Logger };

/** The 429 of a window past its limit, with the seconds left in it as `retry-after`. */
export function rateLimited(outcome: WindowCount, message: string): ApiError {
  return new ApiError(429, 'rate_limit_exceeded', message, { 'retry-after': String(resetSecondsOf(outcome)) });
}

const resetSecondsOf = (outcome: WindowCount) => Math.max(1, Math.ceil(outcome.resetMs / 1000));

const HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'] as const;

function setHeaders(res: Response, limit: number, remaining: number, resetSeconds: number): void {
  res.setHeader('ratelimit-limit', String(limit));
  res.setHeader('ratelimit-remaining', String(Math.max(0, remaining)));
  res.setHeader('ratelimit-reset', String(resetSeconds));
  res.setHeader('ratelimit-policy', `${limit};w=1`);
}

/**
 * Before authentication: the default limit's headers, whole (a request refused with 401 or 403 names no
 * team and is counted against none), so that those answers carry them too. rateLimit replaces them.
 */
export function defaultRateLimitHeaders(defaultPerSecond: number): RequestHandler {
  return (_req, res, next) => {
    setHeaders(res, defaultPerSecond, defaultPerSecond, 1);
    next();
  };
}

/**
 * Counts every authenticated request against its team's per-second limit (the team's override, else
 * the default) and sets `ratelimit-limit`, `ratelimit-remaining`, `ratelimit-reset` and
 * `ratelimit-policy` on every response; over the limit → 429 rate_limit_exceeded with `retry-after`.
 * If Redis is unreachable the request goes through (counters are allowed to be lost; the headers count
 * this request alone in the current second) and /readyz says so. The relay's key check
 * (isRateLimitExempt) is neither counted nor limited, and carries no headers.
 */
export function rateLimit(deps: RateLimitDeps): RequestHandler {
  const count = createWindowCounter(deps.redis, deps.logger);
  return async (req, res, next) => {
    if (isRateLimitExempt(req.method, req.path)) {
      for (const header of HEADERS) res.removeHeader(header);
      return next();
    }
    const { teamId } = authOf(res);
    const limit = (res.locals.rateLimit as number | null | undefined) ?? deps.defaultPerSecond;
    const outcome = await count(`${deps.prefix}:ratelimit:${teamId}`);
    if (!outcome) {
      setHeaders(res, limit, limit - 1, 1);
      return next();
    }
    setHeaders(res, limit, limit - outcome.count, resetSecondsOf(outcome));
    if (outcome.count > limit) {
      throw rateLimited(outcome, `Too many requests. You can only make ${limit} requests per second.`);
    }
    next();
  };
}
