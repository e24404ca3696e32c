// One-shot: creates the database if missing and applies this service's migrations (k8s Job, compose
// one-shot, npm start).
import { runMigrateCommand } from '@postline/platform';
import { loadConfig } from './config.ts';
import { migrate } from './db/migrate.ts';

await runMigrateCommand({ service: 'api-gateway', config: loadConfig(), migrate });
