export { parseEnv, bool, port, positiveNumber, BaseEnv, BrokerEnv, ConfigError } from './config/config.ts';
export { formatTimestamp } from './time/time.ts';
export { createLogger, REDACT_PATHS, type Logger } from './logger/logger.ts';
export { createDb, pingDb, ensureDatabase, migrateToLatest, runMigrateCommand, type DbOptions } from './db/db.ts';
export { paginate, type Page } from './db/pagination.ts';
export { newId, isUuid, uuidv7Time } from './ids/ids.ts';
export { sha256Hex, safeEqual, randomToken, createSecretBox, type SecretBox } from './crypto/crypto.ts';
export {
  ApiError,
  notFound,
  validationError,
  missingField,
  invalidParameter,
  pgCode,
  PG_UNIQUE_VIOLATION,
} from './errors/errors.ts';
export {
  createHttpApp,
  route,
  listen,
  errorHandler,
  notFoundHandler,
  toApiError,
  type HttpApp,
  type HttpAppOptions,
  type Listening,
  type ReadinessCheck,
} from './http/app.ts';
export { parseInput } from './http/validate.ts';
export { requireTeam, teamOf, TEAM_HEADER } from './http/internal.ts';
export { createMetrics, Counter, Gauge, Histogram, type Metrics } from './http/metrics.ts';
export { createLifecycle, type Lifecycle, type Stoppable } from './lifecycle/lifecycle.ts';
