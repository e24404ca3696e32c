import { z } from 'zod';
import { BaseEnv, BrokerEnv, commaList, parseEnv, port, positiveNumber } from '@postline/platform';

const HostName = z
  .string()
  .regex(
    /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)+$/i,
    'must be a host name',
  );

/** Every variable the domain-verifier reads. */
export const Env = BaseEnv.extend(BrokerEnv.shape).extend({
  HTTP_PORT: port(3105),
  /** Seals each domain's DKIM private key at rest. */
  POSTLINE_SECRET_KEY: z.string().min(16, 'must be at least 16 characters'),
  /** Multiplies the check schedule: the first check delay, the back-off, the 72 h window, re-checks. */
  POSTLINE_DELAY_SCALE: positiveNumber(1),
  /** Resolvers for verification lookups (`host` or `host:port`, IPv6 as `[::1]:53`); empty means the system's. */
  DNS_SERVERS: commaList(),
  /** How long one DNS query waits for an answer before it counts as a temporary failure. */
  DNS_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
  /** Our inbound MX host: the target of each domain's return-path MX and receiving MX records. */
  INBOUND_MX_HOST: HostName.default('inbound.postline.test'),
  /** Our open and click tracking host: the CNAME target of each domain's tracking subdomain. */
  TRACKING_HOST: HostName.default('track.postline.test'),
  /** The SPF domain that lists our sending hosts: return-path TXT records say `include:<this>`. */
  SPF_INCLUDE: HostName.default('_spf.postline.test'),
});
export type Env = z.infer<typeof Env>;

/** This service's own Postgres schema. */
export const SCHEMA = 'domain_verifier';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Env> {
  return parseEnv(Env, env);
}
