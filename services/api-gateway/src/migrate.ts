// One-shot: creates the database if missing and applies this service's migrations (k8s Job, compose
// one-shot, npm start).
import { runMigrateCommand } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import { migrate } from './db/migrate.ts';

const config = loadConfig();
await runMigrateCommand({
  service: 'api-gateway',
  url: config.DATABASE_URL,
  schema: SCHEMA,
  level: config.LOG_LEVEL,
  migrate,
});
