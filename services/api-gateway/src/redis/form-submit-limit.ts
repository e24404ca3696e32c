import type { Redis } from 'ioredis';
import type { Logger } from '@postline/platform';

/** The window both limits of a hosted form's submits count in. */
export const FORM_SUBMIT_WINDOW_MS = 60_000;

// Counts one submit against a key that expires a window after its first; returns the count and the ms left.
const COUNT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`;

/** A submit past a limit: which one, and the ms until its window ends. */
export type FormSubmitRefusal = { limit: 'address' | 'form'; retryAfterMs: number };

/** Counts a submit to the form `publicId` from `address`; the refusal when past a limit, else undefined. */
export type FormSubmitLimit = (address: string, publicId: string) => Promise<FormSubmitRefusal | undefined>;

/**
 * The limits of hosted form submits, in Redis so that every gateway counts together: per client address
 * (across forms: one person signs up a few times, a script many), then per form (each submit may send a
 * confirmation email from the team's domain, so a form cannot be turned into a mailer however many addresses
 * a flood comes from). A submit the address limit refuses is not counted against the form, so one address
 * cannot use up a form's budget. When Redis cannot answer, submits go through (as the API rate limit does).
 */
export function createFormSubmitLimit(deps: {
  redis: Redis;
  prefix: string;
  logger: Logger;
  perAddressPerMinute: number;
  perFormPerMinute: number;
}): FormSubmitLimit {
  const count = async (key: string): Promise<[number, number] | undefined> => {
    try {
      return (await deps.redis.eval(COUNT, 1, key, String(FORM_SUBMIT_WINDOW_MS))) as [number, number];
    } catch (err) {
      deps.logger.warn({ err }, 'form submit limiter unavailable; letting the submit through');
      return undefined;
    }
  };
  return async (address, publicId) => {
    const byAddress = await count(`${deps.prefix}:ratelimit:form-address:${address}`);
    if (byAddress && byAddress[0] > deps.perAddressPerMinute) {
      return { limit: 'address', retryAfterMs: Math.max(byAddress[1], 1000) };
    }
    const byForm = await count(`${deps.prefix}:ratelimit:form:${publicId}`);
    if (byForm && byForm[0] > deps.perFormPerMinute) return { limit: 'form', retryAfterMs: Math.max(byForm[1], 1000) };
    return undefined;
  };
}
