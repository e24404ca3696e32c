// `npm test`: types, lint, then the whole jest suite (unit, integration, end-to-end, deploy checks).
// Postgres, RabbitMQ and Redis come from DATABASE_URL, AMQP_URL and REDIS_URL; where one is unset and the
// server answers on its default local port, that is used; otherwise jest's global setup falls back to
// testcontainers.
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ROOT } from './services.ts';

const DEFAULTS = {
  DATABASE_URL: ['postgres://postgres@127.0.0.1:5432/postgres', 5432],
  AMQP_URL: ['amqp://guest:guest@127.0.0.1:5672', 5672],
  REDIS_URL: ['redis://127.0.0.1:6379', 6379],
} as const;

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, timeout: 1000 });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'test' };
for (const [name, [url, port]] of Object.entries(DEFAULTS)) {
  if (!env[name] && (await answers(port))) env[name] = url;
}

function step(label: string, args: string[]): void {
  process.stderr.write(`\n[postline] ${label}\n`);
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: ROOT, env });
  if (r.status !== 0) {
    process.stderr.write(`[postline] ${label} failed\n`);
    process.exit(r.status ?? 1);
  }
}

const bin = (pkg: string, file: string) => join(ROOT, 'node_modules', pkg, file);
const only = process.argv.slice(2);
if (only.length === 0) {
  step('typecheck', [bin('typescript', 'bin/tsc'), '-p', 'tsconfig.json']);
  step('lint', [bin('eslint', 'bin/eslint.js'), '--max-warnings', '0', '.']);
}
// --forceExit: once every test has run and the result is printed, jest exits even if a failed test left a
// handle open (a server its setup started before failing); otherwise such a run would wait forever.
step('jest', [
  '--experimental-vm-modules',
  '--no-warnings=ExperimentalWarning',
  bin('jest', 'bin/jest.js'),
  '--ci',
  '--forceExit',
  ...only,
]);
