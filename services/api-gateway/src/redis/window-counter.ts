import type { Redis } from 'ioredis';
import type { Logger } from '@postline/platform';

// A fixed one-second window per key (a team, a public link), keyed on Redis's own clock so that every gateway replica counts in
// the same window. Returns the count so far and the milliseconds left in the window.
const SCRIPT = `
local t = redis.call('TIME')
local key = KEYS[1] .. ':' .. t[1]
local count = redis.call('INCR', key)
if count == 1 then redis.call('PEXPIRE', key, 2000) end
return {count, 1000 - math.floor(tonumber(t[2]) / 1000)}
`;

type RedisWithLimiter = Redis & { postlineRateLimit: (key: string) => Promise<unknown> };

/** Requests counted in the window so far, and the milliseconds left in it. */
export type WindowCount = { count: number; resetMs: number };

/**
 * Counts one request against `key`'s current one-second window (the same window on every gateway replica);
 * undefined when Redis cannot answer, in which case the caller lets the request through.
 */
export function createWindowCounter(redis: Redis, logger: Logger): (key: string) => Promise<WindowCount | undefined> {
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
