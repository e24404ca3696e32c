// Applies every service's migrations (creating the database first when missing).
import { spawnSync } from 'node:child_process';
import { SERVICES, entry } from './services.ts';

export function migrateAll(env: NodeJS.ProcessEnv): void {
  for (const service of SERVICES) {
    const r = spawnSync(process.execPath, [entry(service, 'migrate')], { stdio: 'inherit', env });
    if (r.status !== 0) throw new Error(`migrations of ${service} failed`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  migrateAll(process.env);
}
