export { infraFromEnv, dockerAvailable, type Infra } from './infra.ts';
export { createTestDatabase, uniqueName, type TestDatabase } from './db.ts';
export { startSystem, freePort, type System, type RunningService } from './system.ts';
