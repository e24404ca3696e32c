import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { ApiError, type Logger } from '@postline/platform';
import { authOf } from './context.ts';

// A fixed one-second window per key (a team, a public link), keyed on Redis's own clock so that every gateway replica counts in
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
 * Counts one request against `key`'s current one-second window (the same window on every gateway replica);
 * undefined when Redis cannot answer, in which case the caller lets the request through.
 */
export function createWindowCounter(redis: Redis, logger: Logger): (key: string) => Promise<Outcome | undefined> {
  if (!('postlineRateLimit' in redis)) redis.defineCommand('postlineRateLimit', { numberOfKeys: 1, lua: SCRIPT });
  let warnedAt = -Infinity;
  let skipped = 0;
  return async (key) => {
    try {
      // EVALSHA after the first call (ioredis falls back to EVAL when the script is not cached).
      const [count, resetMs] = (await (redis as RedisWithLimiter).postlineRateLimit(key)) as [number, number];
      return { count, resetMs };
    } catch (err) {
      // Once every 10 s at most: anyone can send key-less link requests, and each would log.
      skipped++;
      if (Date.now() - warnedAt >= 10_000) {
        logger.warn({ err, requests: skipped }, 'rate limiter unavailable; letting requests through');
        warnedAt = Date.now();
        skipped = 0;
      }
      return undefined;
    }
  };
}

/** The 429 of a window past its limit, with the seconds left in it as `retry-after`. */
export function rateLimited(outcome: Outcome, message: string): ApiError {
  return new ApiError(429, 'rate_limit_exceeded', message, { 'retry-after': String(resetSecondsOf(outcome)) });
}

const resetSecondsOf = (outcome: Outcome) => Math.max(1, Math.ceil(outcome.resetMs / 1000));

/**
 * Counts every authenticated request against its team's per-second limit (the team's override, else
 * the default) and sets `ratelimit-limit`, `ratelimit-remaining`, `ratelimit-reset` and
 * `ratelimit-policy` on every response; over the limit → 429 rate_limit_exceeded with `retry-after`.
 * If Redis is unreachable the request goes through (counters are allowed to be lost) and /readyz says so.
 */
export function rateLimit(deps: RateLimitDeps): RequestHandler {
  const count = createWindowCounter(deps.redis, deps.logger);
  return async (_req, res, next) => {
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
