// `npm test`: the static checks (types, lint, format) and the whole jest suite (unit, integration,
// end-to-end, deploy checks), side by side.
//
// For the inner loop, arguments go to jest and skip the static checks:
//   npm test -- services/sender/test/emails.int.test.ts   one file (any jest path pattern)
//   npm test -- --selectProjects unit                     every unit test, no services started
//   npm test -- services/sender --selectProjects unit     the unit tests under one folder (the path first:
//                                                         --selectProjects takes every name after it)
//
// Postgres, RabbitMQ and Redis come from DATABASE_URL, AMQP_URL and REDIS_URL; where one is unset and the
// server answers on its default local port, that is used; otherwise jest's global setup falls back to
// testcontainers. What the tests need besides (a Chromium for the browser tests, Caddy for the HTTPS test)
// is set up here, or the run stops at once naming what is missing and how to install it.
//
// tsc and eslint keep their caches under .runtime/, so a developer's second run checks only what changed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './services.ts';

const DEFAULTS = {
  DATABASE_URL: ['postgres://postgres@127.0.0.1:5432/postgres', 5432],
  AMQP_URL: ['amqp://guest:guest@127.0.0.1:5672', 5672],
  REDIS_URL: ['redis://127.0.0.1:6379', 6379],
} as const;

/** The tests that drive a browser (the dashboard's, its emailed links', the reference page's, the preference page's); they find
 * Chromium through CHROMIUM_PATH. */
const BROWSER_TESTS = [
  ...readdirSync(join(ROOT, 'tests', 'dashboard')).map((file) => `tests/dashboard/${file}`),
  'services/api-gateway/test/dashboard-browser.int.test.ts',
  'services/api-gateway/test/dashboard-mail.int.test.ts',
  'services/api-gateway/test/reference.int.test.ts',
  'services/sender/test/preference-page.int.test.ts',
];

/** The test that runs Caddy (deploy/Caddyfile) in front of the gateway; it finds Caddy through CADDY_PATH. */
const CADDY_TESTS = ['tests/deploy/tracking-https.test.ts'];

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

function log(message: string): void {
  process.stderr.write(`[postline] ${message}\n`);
}

const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'test' };
for (const [name, [url, port]] of Object.entries(DEFAULTS)) {
  if (!env[name] && (await answers(port))) env[name] = url;
}

const bin = (pkg: string, file: string) => join(ROOT, 'node_modules', pkg, file);
const cache = join(ROOT, '.runtime', 'test-cache');
const only = process.argv.slice(2);

/** Runs one check; resolves with its exit code and its output, printed whole once it ends. */
function check(label: string, args: string[]): Promise<{ label: string; code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    // At the lowest priority: the checks take the CPU jest's files leave idle and never slow the services
    // under test (a chaos run's restarts, a delivery's timing); what they have not done by jest's end runs then.
    if (child.pid !== undefined) setPriority(child.pid, 19);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('close', (code) => resolve({ label, code: code ?? 1, output }));
  });
}

/**
 * The static checks side by side; each is reported when it ends (its output whole), so they can run beside
 * jest, whose tests spend much of their time waiting on the services. Resolves with whether all passed.
 */
async function staticChecks(): Promise<boolean> {
  mkdirSync(cache, { recursive: true });
  const started = Date.now();
  const report = (r: { label: string; code: number; output: string }) => {
    const took = ((Date.now() - started) / 1000).toFixed(1);
    log(`${r.label}: ${r.code === 0 ? 'ok' : 'FAILED'} (${took} s)`);
    if (r.code !== 0 && r.output.trim()) process.stderr.write(r.output);
    return r.code === 0;
  };
  const results = await Promise.all([
    check('typecheck', [
      bin('typescript', 'bin/tsc'),
      '-p',
      'tsconfig.json',
      '--incremental',
      '--tsBuildInfoFile',
      join(cache, 'tsconfig.tsbuildinfo'),
    ]).then(report),
    // The dashboard is browser code (DOM types, JSX): its own project.
    check('typecheck dashboard', [
      bin('typescript', 'bin/tsc'),
      '-p',
      'web/dashboard/tsconfig.json',
      '--incremental',
      '--tsBuildInfoFile',
      join(cache, 'dashboard.tsbuildinfo'),
    ]).then(report),
    check('lint', [
      bin('eslint', 'bin/eslint.js'),
      '--max-warnings',
      '0',
      '--cache',
      '--cache-strategy',
      'content',
      '--cache-location',
      join(cache, 'eslint-cache'),
      '.',
    ]).then(report),
    check('format', [bin('prettier', 'bin/prettier.cjs'), '--check', '--log-level', 'warn', '.']).then(report),
  ]);
  return results.every(Boolean);
}

/** Whether the jest arguments select a browser test (jest reads positional arguments as path patterns). */
function selectsTest(args: string[], tests: string[]): boolean {
  const project = args.indexOf('--selectProjects');
  if (project >= 0 && args[project + 1] === 'unit') return false;
  const patterns = args.filter((a, i) => !a.startsWith('-') && !args[i - 1]?.startsWith('--select'));
  if (patterns.length === 0) return true;
  return patterns.some((p) => {
    try {
      return tests.some((test) => new RegExp(p).test(join(ROOT, test)));
    } catch {
      return false;
    }
  });
}

function which(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/**
 * Debian's package `name` (its command of the same name), installed through apt where this runs as root on
 * Debian (as CI does); undefined elsewhere or when apt fails.
 */
function debianPackage(name: string, forWhat: string): string | undefined {
  if (process.getuid?.() !== 0 || !existsSync('/etc/debian_version') || !which('apt-get')) return undefined;
  log(`installing Debian's ${name} for ${forWhat} (apt-get install ${name})`);
  const r = spawnSync('sh', ['-c', `apt-get update -qq && apt-get install -y -qq ${name}`], { stdio: 'inherit' });
  return r.status === 0 ? which(name) : undefined;
}

/** Where playwright-core (a dependency of the sender's tests) keeps its own Chromium build. */
const PLAYWRIGHT = join(ROOT, 'services', 'sender', 'node_modules', 'playwright-core');

/**
 * Off Debian: the Chromium build Playwright downloads (`playwright-core install chromium`, into its cache
 * in the user's home), or undefined when the download fails (no network to Playwright's host).
 */
function playwrightChromium(): string | undefined {
  const executable = () => {
    const r = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { chromium } from '${PLAYWRIGHT}/index.mjs'; console.log(chromium.executablePath());`,
      ],
      { encoding: 'utf8' },
    );
    const path = r.status === 0 ? r.stdout.trim() : '';
    return path && existsSync(path) ? path : undefined;
  };
  if (executable()) return executable();
  log("installing Playwright's Chromium for the browser tests (playwright-core install chromium)");
  const r = spawnSync(process.execPath, [join(PLAYWRIGHT, 'cli.js'), 'install', 'chromium'], { stdio: 'inherit' });
  return r.status === 0 ? executable() : undefined;
}

/**
 * A Chromium for the browser tests: CHROMIUM_PATH, or `chromium` on PATH, or Debian's package installed
 * through apt where this runs as root on Debian (as CI does), or off Debian the build Playwright installs.
 * Where none can be had it stops with one line naming the command that installs one.
 */
function ensureChromium(): void {
  if (env.CHROMIUM_PATH && existsSync(env.CHROMIUM_PATH)) return;
  let found = which('chromium') ?? debianPackage('chromium', 'the browser tests');
  if (!found && !existsSync('/etc/debian_version')) found = playwrightChromium();
  if (!found) {
    const install = existsSync('/etc/debian_version') ? 'sudo apt-get install chromium' : 'install Chromium';
    log(
      `Chromium is missing (the dashboard's browser tests drive it): ${install}, ` +
        'or set CHROMIUM_PATH to a Chromium or Chrome executable',
    );
    process.exit(1);
  }
  env.CHROMIUM_PATH = found;
}

/**
 * Caddy for the HTTPS test: CADDY_PATH, or `caddy` on PATH, or Debian's package installed through apt where
 * this runs as root on Debian (as CI does). Where none can be had it stops naming how to install it.
 */
function ensureCaddy(): void {
  if (env.CADDY_PATH && existsSync(env.CADDY_PATH)) return;
  const found = which('caddy') ?? debianPackage('caddy', 'the HTTPS test');
  if (!found) {
    const install = existsSync('/etc/debian_version')
      ? 'sudo apt-get install caddy'
      : 'install Caddy 2 (https://caddyserver.com/docs/install)';
    log(`Caddy is missing (the HTTPS test runs deploy/Caddyfile): ${install}, or set CADDY_PATH to a caddy executable`);
    process.exit(1);
  }
  env.CADDY_PATH = found;
}

if (selectsTest(only, BROWSER_TESTS)) ensureChromium();
if (selectsTest(only, CADDY_TESTS)) ensureCaddy();
// The whole run: the static checks beside jest, whose two workers' files mostly wait on the services; the
// inner loop skips them.
const checks = only.length === 0 ? staticChecks() : Promise.resolve(true);

log('jest');
// --forceExit: once every test has run and the result is printed, jest exits even if a failed test left a
// handle open (a server its setup started before failing); otherwise such a run would wait forever.
const jest = await new Promise<number>((resolve) => {
  const child = spawn(
    process.execPath,
    [
      '--experimental-vm-modules',
      '--no-warnings=ExperimentalWarning',
      bin('jest', 'bin/jest.js'),
      '--ci',
      '--forceExit',
      ...only,
    ],
    { stdio: 'inherit', cwd: ROOT, env },
  );
  child.once('close', (code) => resolve(code ?? 1));
});
if (jest !== 0) log('jest failed');
const checked = await checks;
if (!checked) log('static checks failed (above)');
process.exit(jest !== 0 ? jest : checked ? 0 : 1);
