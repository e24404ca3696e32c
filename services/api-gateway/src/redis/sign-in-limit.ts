import type { Redis } from 'ioredis';
import type { Logger } from '@postline/platform';

/** The window both sign-in limits count in, and how long an account stays locked. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;

// Counts one event against a key that expires a window after its first event; returns the count and the ms left.
const COUNT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`;
// The count so far and the ms left, without counting.
const PEEK = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
return {n, redis.call('PTTL', KEYS[1])}
`;

export type SignInLimit = {
  /** Counts an attempt from `address`; the ms to wait when past the limit, else undefined. */
  attempt: (address: string) => Promise<number | undefined>;
  /** The ms an account stays locked, or undefined when it is not. */
  locked: (email: string) => Promise<number | undefined>;
  failed: (email: string) => Promise<void>;
  succeeded: (email: string) => Promise<void>;
  /** Counts a reset email asked for `email`; false past RESET_EMAILS_PER_ACCOUNT in the window (no more sent). */
  resetEmail: (email: string) => Promise<boolean>;
};

/** Reset emails one address may be sent per window, however many clients ask: no mailbox is flooded. */
export const RESET_EMAILS_PER_ACCOUNT = 3;

/**
 * Sign-in attempts per client address and failed sign-ins per account (the lower-cased email, whether or not an
 * account has it, so that a lockout says nothing about existence), in Redis so that every gateway counts
 * together. Past `failuresPerAccount` failures the account is locked until its window ends. When Redis cannot
 * answer, sign-in goes on unlimited (as the API rate limit does) and that is logged.
 */
export function createSignInLimit(deps: {
  redis: Redis;
  prefix: string;
  logger: Logger;
  attemptsPerAddress: number;
  failuresPerAccount: number;
}): SignInLimit {
  const key = (kind: string, id: string) => `${deps.prefix}:signin:${kind}:${id}`;
  const run = async (script: string, k: string): Promise<[number, number] | undefined> => {
    try {
      return (await deps.redis.eval(script, 1, k, String(SIGN_IN_WINDOW_MS))) as [number, number];
    } catch (err) {
      deps.logger.warn({ err }, 'sign-in limiter unavailable; letting the attempt through');
      return undefined;
    }
  };
  const account = (email: string) => key('account', email.toLowerCase());
  return {
    async attempt(address) {
      const outcome = await run(COUNT, key('address', address));
      return outcome && outcome[0] > deps.attemptsPerAddress ? Math.max(outcome[1], 1000) : undefined;
    },
    async locked(email) {
      const outcome = await run(PEEK, account(email));
      return outcome && outcome[0] >= deps.failuresPerAccount ? Math.max(outcome[1], 1000) : undefined;
    },
    async failed(email) {
      await run(COUNT, account(email));
    },
    async succeeded(email) {
      await deps.redis.del(account(email)).catch(() => undefined);
    },
    async resetEmail(email) {
      const outcome = await run(COUNT, key('reset', email.toLowerCase()));
      return !outcome || outcome[0] <= RESET_EMAILS_PER_ACCOUNT;
    },
  };
}
