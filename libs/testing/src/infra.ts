import { execFileSync } from 'node:child_process';

/**
 * Where the integration tests find Postgres, RabbitMQ and Redis. URLs come from the environment (our
 * machines and CI run the three servers locally); testcontainers starts them only when no URL is set and
 * a Docker engine answers.
 */
export type Infra = { databaseUrl: string; amqpUrl: string; redisUrl: string };

export function infraFromEnv(env: NodeJS.ProcessEnv = process.env): Infra {
  const { DATABASE_URL, AMQP_URL, REDIS_URL } = env;
  if (!DATABASE_URL || !AMQP_URL || !REDIS_URL) {
    throw new Error(
      'DATABASE_URL, AMQP_URL and REDIS_URL must be set for integration tests (npm test sets them; ' +
        'without them, a Docker engine is needed for testcontainers)',
    );
  }
  return { databaseUrl: DATABASE_URL, amqpUrl: AMQP_URL, redisUrl: REDIS_URL };
}

export function dockerAvailable(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}
