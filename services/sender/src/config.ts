import { hostname } from 'node:os';
import { z } from 'zod';
import { BaseEnv, bool, BrokerEnv, commaList, parseEnv, port, positiveNumber } from '@postline/platform';

/** Every variable the sender reads. */
export const Env = BaseEnv.extend(BrokerEnv.shape).extend({
  HTTP_PORT: port(3101),
  /** Opens the DKIM keys of the domains' read model; also keys the VERP tags. */
  POSTLINE_SECRET_KEY: z.string().min(16, 'must be at least 16 characters'),
  /** Multiplies the SMTP retry back-off, the give-up window and temporary suppressions. */
  POSTLINE_DELAY_SCALE: positiveNumber(1),
  /** Resolvers for MX lookups (`host` or `host:port`, IPv6 as `[::1]:53`); empty means the system's. */
  DNS_SERVERS: commaList(),
  DNS_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
  /** The port dialled on recipients' mail servers. */
  MX_DELIVERY_PORT: port(25),
  /** Development and tests only: MX hosts may resolve to private or loopback addresses. */
  ALLOW_PRIVATE_NETWORK_TARGETS: bool(false),
  /**
   * The development inbox: the MTA keeps every message in the install (GET /dev-inbox/messages, the
   * dashboard's Dev inbox) instead of sending it, and a domain the team has added may send before it is
   * verified. For staging and laptops, never production: it is off unless set, logged at start and shown on
   * every dashboard page.
   */
  DEV_INBOX: bool(false),
  /** Days a message stays in the development inbox before it is deleted. */
  DEV_INBOX_RETENTION_DAYS: positiveNumber(7),
  /** The name we greet recipients' servers with (EHLO); should match our sending IP's PTR record. */
  SMTP_HELO_NAME: z.string().min(1).default(hostname()),
  /** The public API's address: share and attachment download links point there. */
  PUBLIC_BASE_URL: z.string().url().default('http://localhost:3000'),
  /**
   * Delivery attempts (SMTP transactions) in flight per sender process. 0: this process delivers nothing
   * (it runs no `sender.deliver` consumer): a replica that only accepts, while the commands wait in the
   * queue for the replicas that deliver.
   */
  DELIVERY_CONCURRENCY: z.coerce.number().int().nonnegative().default(256),
  /**
   * The reputation guard (docs/reputation.md): a team or sending domain whose hard-bounce rate, or complaint
   * rate, over its last REPUTATION_WINDOW sends is above its line is paused, once it has at least
   * REPUTATION_MIN_SENDS sends in that window. Rates are fractions: 0.04 is 4%, Resend's bounce line;
   * 0.0008 is 0.08%, its complaint line.
   */
  REPUTATION_BOUNCE_RATE: z.coerce.number().gt(0).lte(1).default(0.04),
  REPUTATION_COMPLAINT_RATE: z.coerce.number().gt(0).lte(1).default(0.0008),
  REPUTATION_WINDOW: z.coerce.number().int().positive().default(10_000),
  REPUTATION_MIN_SENDS: z.coerce.number().int().positive().default(2_500),
  /**
   * A JSON file of traffic-shaping limits per mailbox provider over the defaults (docs/behaviour.md), read
   * at start and again on SIGHUP; unset or empty: the defaults.
   */
  SHAPING_CONFIG: z
    .string()
    .optional()
    .transform((v) => v || undefined),
});
export type Env = z.infer<typeof Env>;

/** This service's own Postgres schema. */
export const SCHEMA = 'sender';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Env> {
  return parseEnv(Env, env);
}
