import { z } from 'zod';
import { BaseEnv, BrokerEnv, commaList, parseEnv, port, positiveNumber } from '@postline/platform';

const Url = z.string().url();

/** Every variable the inbound-smtp reads. */
export const Env = BaseEnv.extend(BrokerEnv.shape).extend({
  HTTP_PORT: port(3102),
  /** Signs the received emails' download links and checks the VERP tags of bounces. */
  POSTLINE_SECRET_KEY: z.string().min(16, 'must be at least 16 characters'),
  /** Multiplies the retention job's interval (tests shrink it). */
  POSTLINE_DELAY_SCALE: positiveNumber(1),
  /** The inbound MX (port 25 in production). */
  SMTP_MX_PORT: port(2525),
  /** The SMTP relay with STARTTLS (587 in production). */
  SMTP_RELAY_PORT: port(2587),
  /** The SMTP relay with implicit TLS (465 in production). */
  SMTP_RELAY_TLS_PORT: port(2465),
  /** PEM files of the relay's and the MX's TLS certificate; unset: a self-signed pair generated at start. */
  SMTP_TLS_CERT: z.string().min(1).optional(),
  SMTP_TLS_KEY: z.string().min(1).optional(),
  /** The host the domains' receiving and return-path MX records point at; our SMTP greeting names it. */
  INBOUND_MX_HOST: z.string().min(1).default('inbound.postline.test'),
  /** Resolvers for the SPF, DKIM and DMARC lookups of received mail (`host` or `host:port`); empty: the system's. */
  DNS_SERVERS: commaList(),
  DNS_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
  /** The public API's address: received emails' download links point there. */
  PUBLIC_BASE_URL: Url.default('http://localhost:3000'),
  /** The api-gateway the relay submits through (the relay is an API client: same auth, limits, idempotency). */
  API_GATEWAY_URL: Url.default('http://127.0.0.1:3000'),
});
export type Env = z.infer<typeof Env>;

/** This service's own Postgres schema. */
export const SCHEMA = 'inbound_smtp';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Env> {
  return parseEnv(Env, env);
}
