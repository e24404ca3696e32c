import type { RequestHandler } from 'express';
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

/**
 * Counts every authenticated request against its team's per-second limit (the team's override, else
 * the default) and sets `ratelimit-limit`, `ratelimit-remaining`, `ratelimit-reset` and
 * `ratelimit-policy` on every response; over the limit → 429 rate_limit_exceeded with `retry-after`.
 * If Redis is unreachable the request goes through (counters are allowed to be lost) and /readyz says so.
 * The relay's key check (isRateLimitExempt) is neither counted nor limited.
 */
export function rateLimit(deps: RateLimitDeps): RequestHandler {
  const count = createWindowCounter(deps.redis, deps.logger);
  return async (req, res, next) => {
    if (isRateLimitExempt(req.method, req.path)) return next();
    const { teamId } = authOf(res);
    const limit = (res.locals.rateLimit as number | null | undefined) ?? deps.defaultPerSecond;
    const outcome = await count(`${deps.prefix}:ratelimit:${teamId}`);
    if (!outcome) return next();
    const resetSeconds = resetSecondsOf(outcome);
    res.setHeader('ratelimit-limit', String(limit));
    res.setHeader('ratelimit-remaining', String(Math.max(0, limit - outcome.count)));
    res.setHeader('ratelimit-reset', String(resetSeconds));
    res.setHeader('ratelimit-policy', `${limit};w=1`);
    if (outcome.count > limit) {
      throw rateLimited(outcome, `Too many requests. You can only make ${limit} requests per second.`);
    }
    next();
  };
}
