export { infraFromEnv, dockerAvailable, type Infra } from './infra.ts';
export { createTestDatabase, uniqueName, type TestDatabase } from './db.ts';
export { startSystem, freePort, SERVICE_NAMES, type System, type RunningService, type ServiceName } from './system.ts';
