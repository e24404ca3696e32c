import { z } from 'zod';

/** Thrown at start-up when the environment is unusable; the message names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses `env` with a zod object schema whose keys are the variable names, and fails fast naming each
 * offending variable. The result is frozen.
 *
 * @example
 * const Env = z.object({ DATABASE_URL: z.string().url(), HTTP_PORT: port(3001) });
 * const env = parseEnv(Env, process.env);
 */
export function parseEnv<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv): Readonly<z.infer<S>> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  return Object.freeze(result.data);
}

/** `'true' | 'false'` only; anything else is a configuration error (never `z.coerce.boolean()`). */
export function bool(defaultValue: boolean) {
  return z
    .enum(['true', 'false'], { message: "must be 'true' or 'false'" })
    .default(defaultValue ? 'true' : 'false')
    .transform((v) => v === 'true');
}

export function port(defaultValue: number) {
  return z.coerce.number().int().min(0).max(65535).default(defaultValue);
}

export function positiveNumber(defaultValue: number) {
  return z.coerce.number().positive().default(defaultValue);
}

/**
 * A comma-separated list (`DNS_SERVERS=10.0.0.2,[::1]:53`), entries trimmed; unset or empty is `[]`.
 */
export function commaList() {
  return z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    );
}

/** The variables every service reads. */
export const BaseEnv = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postline'),
  /** Connections each process may open to Postgres; unset, the service's own default (the gateway 20, others 10). */
  DATABASE_POOL_SIZE: z.coerce.number().int().positive().optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10000),
});

/** The variables of a service that talks to RabbitMQ. */
export const BrokerEnv = z.object({
  AMQP_URL: z.string().url().default('amqp://guest:guest@127.0.0.1:5672'),
  BROKER_PREFIX: z
    .string()
    .regex(/^[a-z0-9_.-]+$/i)
    .default('postline'),
});
