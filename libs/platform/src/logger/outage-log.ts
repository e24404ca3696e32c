import type { Logger } from './logger.ts';

/** The servers a service depends on, as an operator knows them. */
export type Dependency = 'PostgreSQL' | 'RabbitMQ' | 'Redis';

const HOW_TO_START: Record<Dependency, string> = {
  PostgreSQL: 'start PostgreSQL (docker compose up -d postgres) or set DATABASE_URL to where it runs',
  RabbitMQ: 'start RabbitMQ (docker compose up -d rabbitmq) or set AMQP_URL to where it runs',
  Redis: 'start Redis (docker compose up -d redis) or set REDIS_URL to where it runs',
};

/** Failures after the first are logged at most this often (they are retried far more often). */
export const OUTAGE_REPEAT_MS = 60_000;

export type OutageLog = {
  /** An attempt to reach the dependency failed: logged the first time, then at most once per minute. */
  failed(err: unknown): void;
  /** The dependency answered: one line if an outage had been logged. */
  recovered(): void;
};

/**
 * `url` as it may be logged: scheme, host, port and path, without the user, password or query.
 *
 * @example
 * addressOf('amqp://guest:secret@127.0.0.1:5999/%2f?heartbeat=10'); // 'amqp://127.0.0.1:5999/%2f'
 */
export function addressOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(an unparsable URL)';
  }
}

// One per dependency and address in a process, so that the parts reaching the same server (a pool, the
// outbox relay, a LISTEN connection) report one outage once between them, not each its own every second.
const outages = new Map<string, OutageLog>();
// The first of each dependency, for a part that sees only the error (a job's failed pass).
const firstOf = new Map<Dependency, OutageLog>();

/**
 * Logs an unreachable dependency the way a newcomer can act on: one line naming it, the address tried
 * (without credentials), why, and how to start it; then, while it stays down, one reminder a minute
 * instead of a stack trace per retry. Each failure's error, stack included, is at debug level.
 *
 * @example
 * const outage = outageLog(logger, 'RabbitMQ', config.AMQP_URL);
 * try { await connect(); outage.recovered(); } catch (err) { outage.failed(err); }
 */
export function outageLog(logger: Logger, dependency: Dependency, url: string): OutageLog {
  const address = addressOf(url);
  const key = `${dependency} ${address}`;
  let outage = outages.get(key);
  if (!outage) {
    outage = createOutageLog({ logger, dependency, address });
    outages.set(key, outage);
    if (!firstOf.has(dependency)) firstOf.set(dependency, outage);
  }
  return outage;
}

/** The outage log this process made first for `dependency`, if any (see outageLog). */
export function knownOutageLog(dependency: Dependency): OutageLog | undefined {
  return firstOf.get(dependency);
}

function createOutageLog(opts: { logger: Logger; dependency: Dependency; address: string }): OutageLog {
  const { logger, dependency, address } = opts;
  let since: number | undefined;
  let lastLogged = 0;
  let failures = 0;
  return {
    failed(err) {
      const now = Date.now();
      const reason = reasonOf(err);
      failures++;
      logger.debug({ err, dependency, address }, `${dependency} connection attempt failed`);
      if (since === undefined) {
        since = now;
        lastLogged = now;
        logger.warn(
          { dependency, address, reason },
          `cannot connect to ${dependency} at ${address} (${reason}): ${HOW_TO_START[dependency]}; retrying until it answers`,
        );
        return;
      }
      if (now - lastLogged < OUTAGE_REPEAT_MS) return;
      lastLogged = now;
      const downS = Math.round((now - since) / 1000);
      logger.warn(
        { dependency, address, reason, failures, down_s: downS },
        `still cannot connect to ${dependency} at ${address} after ${downS} s (${reason}); retrying`,
      );
    },
    recovered() {
      if (since === undefined) return;
      logger.info(
        { dependency, address, down_s: Math.round((Date.now() - since) / 1000) },
        `${dependency} at ${address} answers again`,
      );
      since = undefined;
      failures = 0;
    },
  };
}

/** A system error's code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT), else the error's first line. */
function reasonOf(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  const text = typeof message === 'string' && message ? message : String(err);
  return text.split('\n')[0]!.slice(0, 200);
}
