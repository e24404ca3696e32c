import type { z } from 'zod';
import { BaseEnv, BrokerEnv, parseEnv, port } from '@postline/platform';

/** Every variable the domain-verifier reads. */
export const Env = BaseEnv.extend(BrokerEnv.shape).extend({
  HTTP_PORT: port(3105),
});
export type Env = z.infer<typeof Env>;

/** This service's own Postgres schema. */
export const SCHEMA = 'domain_verifier';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Env> {
  return parseEnv(Env, env);
}
