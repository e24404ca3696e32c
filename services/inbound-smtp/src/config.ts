import type { z } from 'zod';
import { BaseEnv, BrokerEnv, parseEnv, port } from '@postline/platform';

/** Every variable the inbound-smtp reads. */
export const Env = BaseEnv.extend(BrokerEnv.shape).extend({
  HTTP_PORT: port(3102),
});
export type Env = z.infer<typeof Env>;

/** This service's own Postgres schema. */
export const SCHEMA = 'inbound_smtp';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Env> {
  return parseEnv(Env, env);
}
