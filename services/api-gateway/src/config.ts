import { z } from 'zod';
import { BaseEnv, BrokerEnv, parseEnv, port, positiveNumber } from '@postline/platform';

const Url = z.string().url();

/**
 * Every variable the api-gateway reads. AMQP_URL and BROKER_PREFIX are used only with the dashboard's emails
 * configured: the gateway then consumes `internal.webhook.disabled` to email the team's admins.
 */
export const Env = BaseEnv.extend(BrokerEnv.shape).extend({
  API_PORT: port(3000),
  REDIS_URL: Url.default('redis://127.0.0.1:6379'),
  REDIS_PREFIX: z
    .string()
    .regex(/^[a-z0-9_.-]+$/i)
    .default('postline'),
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().positive().default(10),
  PUBLIC_LINK_RATE_LIMIT_PER_SECOND: z.coerce.number().int().positive().default(10),
  /** Hosted signup form submits one client address may make per minute, across forms. */
  FORM_SUBMITS_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().positive().default(10),
  /** Submits one signup form may take per minute, from all addresses. */
  FORM_SUBMITS_PER_FORM_PER_MINUTE: z.coerce.number().int().positive().default(60),
  /**
   * How many proxies in front of the gateway add the address they were reached from to X-Forwarded-For (an
   * ingress, a load balancer). The client's address, which per-address limits and the audit log use, is
   * then that many hops from the right of it. 0: none; the client is the connection's peer, and a client's
   * own X-Forwarded-For is ignored (it could name anyone).
   */
  /** Multiplies the retention jobs' intervals (tests shrink it); see docs/configuration.md. */
  POSTLINE_DELAY_SCALE: positiveNumber(1),
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  PUBLIC_BASE_URL: Url.default('http://localhost:3000'),
  /** A dashboard session ends after this long unused… */
  SESSION_IDLE_MINUTES: z.coerce.number().int().positive().default(720),
  /** …and this long after sign-in whatever the use. */
  SESSION_MAX_AGE_HOURS: z.coerce.number().int().positive().default(168),
  /** Sign-in attempts one client address may make per 15 minutes. */
  SIGN_IN_ATTEMPTS_PER_ADDRESS: z.coerce.number().int().positive().default(30),
  /** Failed sign-ins after which an account is locked for 15 minutes. */
  SIGN_IN_FAILURES_PER_ACCOUNT: z.coerce.number().int().positive().default(5),
  /**
   * The dashboard's emails (invites, password resets, notices to a team's admins that a webhook endpoint was
   * disabled) are sent from this address, as this team, which must have verified its domain; both unset, the
   * links are shown to the admin to copy instead, and no notice is emailed.
   */
  DASHBOARD_MAIL_FROM: z.string().min(1).optional(),
  DASHBOARD_MAIL_TEAM_ID: z.string().uuid().optional(),
  SENDER_URL: Url.default('http://127.0.0.1:3101'),
  INBOUND_SMTP_URL: Url.default('http://127.0.0.1:3102'),
  WEBHOOK_DISPATCHER_URL: Url.default('http://127.0.0.1:3103'),
  DOMAIN_VERIFIER_URL: Url.default('http://127.0.0.1:3105'),
});
export type Env = z.infer<typeof Env>;

export const SCHEMA = 'gateway';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Env> {
  return parseEnv(Env, env);
}
