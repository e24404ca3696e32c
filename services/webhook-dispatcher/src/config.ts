import { z } from 'zod';
import { BaseEnv, bool, BrokerEnv, parseEnv, port, positiveNumber } from '@postline/platform';

/** Every variable the webhook-dispatcher reads. */
export const Env = BaseEnv.extend(BrokerEnv.shape).extend({
  HTTP_PORT: port(3103),
  /** Seals each endpoint's signing secret at rest. */
  POSTLINE_SECRET_KEY: z.string().min(16, 'must be at least 16 characters'),
  /** Multiplies the retry waits, the 24 h rotation overlap and the 5-day disable window. */
  POSTLINE_DELAY_SCALE: positiveNumber(1),
  /** Development and tests only: endpoints may use http:// and private or loopback addresses. */
  ALLOW_PRIVATE_NETWORK_TARGETS: bool(false),
});
export type Env = z.infer<typeof Env>;

/** This service's own Postgres schema. */
export const SCHEMA = 'webhook_dispatcher';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Env> {
  return parseEnv(Env, env);
}
