// `npm start`: migrate, then run all six services in the foreground with the runtime contract's
// defaults. Ctrl-C (or SIGTERM) stops them gracefully; a service that dies stops the rest.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { migrateAll } from './migrate.ts';
import { ROOT, SERVICES, entry, localEnv, localSecretKey } from './services.ts';

// Addresses of this host's own services follow the ports that were set (API_PORT=4000: the relay asks the
// gateway on 4000, links point at it).
const env = localEnv(process.env);
// Compiled code of the modules each service loads, reused at the next start (as the image sets it).
env.NODE_COMPILE_CACHE ??= join(ROOT, '.runtime', 'compile-cache');
env.POSTLINE_SECRET_KEY ??= localSecretKey();

migrateAll(env);

const children = new Map<string, ChildProcess>();
let stopping = false;

function stopAll(signal: NodeJS.Signals, code: number) {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`[postline] stopping all services (${signal})\n`);
  for (const child of children.values()) child.kill('SIGTERM');
  const force = setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
  }, 15_000);
  force.unref();
  const wait = setInterval(() => {
    if ([...children.values()].every((c) => c.exitCode !== null || c.signalCode !== null)) {
      clearInterval(wait);
      process.exit(code);
    }
  }, 100);
}

for (const service of SERVICES) {
  const child = spawn(process.execPath, [entry(service, 'main')], { stdio: 'inherit', env });
  children.set(service, child);
  child.on('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`[postline] ${service} exited (${signal ?? code}); stopping the others\n`);
      stopAll('SIGTERM', 1);
    }
  });
}
process.stderr.write(`[postline] all services started; API on http://localhost:${env.API_PORT || 3000}\n`);
process.on('SIGINT', () => stopAll('SIGINT', 0));
process.on('SIGTERM', () => stopAll('SIGTERM', 0));
