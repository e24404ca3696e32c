import { serviceMigrations } from '@postline/platform';
import { SCHEMA } from '../config.ts';

/** This service's migrations: applied by its one-shot (src/migrate.ts), the tests and the admin CLI. */
export const migrate = serviceMigrations(SCHEMA, new URL('../../migrations', import.meta.url));
