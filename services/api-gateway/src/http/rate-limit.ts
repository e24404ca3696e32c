import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { ApiError, type Logger } from '@postline/platform';
import { authOf } from './context.ts';

// A fixed one-second window per team, keyed on Redis's own clock so that every gateway replica counts in
// the same window. Returns the count so far and the milliseconds left in the window.
const SCRIPT = `
local t = redis.call('TIME')
local key = KEYS[1] .. ':' .. t[1]
local count = redis.call('INCR', key)
if count == 1 then redis.call('PEXPIRE', key, 2000) end
return {count, 1000 - math.floor(tonumber(t[2]) / 1000)}
`;

export type RateLimitDeps = { redis: Redis; prefix: string; defaultPerSecond: number; logger: Logger };

type RedisWithLimiter = Redis & { postlineRateLimit: (key: string) => Promise<unknown> };

type Outcome = { count: number; resetMs: number };

/**
 * Counts every authenticated request against its team's per-second limit (the team's override, else
 * the default) and sets `ratelimit-limit`, `ratelimit-remaining`, `ratelimit-reset` and
 * `ratelimit-policy` on every response; over the limit → 429 rate_limit_exceeded with `retry-after`.
 * If Redis is unreachable the request goes through (counters are allowed to be lost) and /readyz says so.
 */
export function rateLimit(deps: RateLimitDeps): RequestHandler {
  if (!('postlineRateLimit' in deps.redis)) deps.redis.defineCommand('postlineRateLimit', { numberOfKeys: 1, lua: SCRIPT });
  return async (_req, res, next) => {
    const { teamId } = authOf(res);
    const limit = (res.locals.rateLimit as number | null | undefined) ?? deps.defaultPerSecond;
    let outcome: Outcome;
    try {
      // EVALSHA after the first call (ioredis falls back to EVAL when the script is not cached).
      const [count, resetMs] = (await (deps.redis as RedisWithLimiter).postlineRateLimit(`${deps.prefix}:ratelimit:${teamId}`)) as [number, number];
      outcome = { count, resetMs };
    } catch (err) {
      deps.logger.warn({ err }, 'rate limiter unavailable; letting the request through');
      return next();
    }
    const resetSeconds = Math.max(1, Math.ceil(outcome.resetMs / 1000));
    res.setHeader('ratelimit-limit', String(limit));
    res.setHeader('ratelimit-remaining', String(Math.max(0, limit - outcome.count)));
    res.setHeader('ratelimit-reset', String(resetSeconds));
    res.setHeader('ratelimit-policy', `${limit};w=1`);
    if (outcome.count > limit) {
      throw new ApiError(429, 'rate_limit_exceeded', `Too many requests. You can only make ${limit} requests per second.`, {
        'retry-after': String(resetSeconds),
      });
    }
    next();
  };
}
