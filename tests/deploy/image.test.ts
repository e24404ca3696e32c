// deploy/Dockerfile and deploy/entrypoint.sh without a Docker engine: the Dockerfile is checked against
// the workspace it must install, and the entrypoint is run for real with a stand-in `node` on PATH.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { SERVICES, loadYamlFile, readRepoFile, repoRoot } from './manifests.ts';

/** Every workspace package directory (from pnpm-workspace.yaml's `packages` globs of the form dir/* or dir). */
function workspacePackages(): string[] {
  const { packages } = loadYamlFile<{ packages: string[] }>('pnpm-workspace.yaml');
  return packages
    .flatMap((glob) => {
      if (!glob.endsWith('/*')) return [glob];
      const dir = glob.slice(0, -2);
      return readdirSync(join(repoRoot, dir)).map((name) => `${dir}/${name}`);
    })
    .filter((dir) => existsSync(join(repoRoot, dir, 'package.json')));
}

describe('deploy/Dockerfile', () => {
  const dockerfile = readRepoFile('deploy/Dockerfile');
  const instructions = dockerfile.split('\n').filter((l) => /^[A-Z]+\s/.test(l));

  it('builds on node:24-slim with the pnpm version the repository pins', () => {
    // The dashboard's build stage, then the runtime image.
    expect(instructions.filter((l) => l.startsWith('FROM '))).toEqual([
      'FROM node:24-slim AS dashboard',
      'FROM node:24-slim',
    ]);
    const { packageManager } = JSON.parse(readRepoFile('package.json')) as { packageManager: string };
    expect(dockerfile).toContain(`ARG PNPM_VERSION=${packageManager.replace(/^pnpm@/, '')}\n`);
  });

  it('copies every workspace manifest before installing, and the source only after', () => {
    const install = instructions.findIndex((l) => l.startsWith('RUN pnpm install --frozen-lockfile --prod'));
    expect(install).toBeGreaterThan(0);
    const before = instructions.slice(0, install);
    for (const file of ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml']) {
      expect(before.some((l) => l.startsWith('COPY ') && l.split(/\s+/).includes(file))).toBe(true);
    }
    for (const pkg of workspacePackages()) {
      expect(before).toContain(`COPY ${pkg}/package.json ${pkg}/`);
    }
    expect(before.some((l) => /^COPY (libs|services)\/ /.test(l))).toBe(false);
    expect(instructions.slice(install)).toEqual(
      expect.arrayContaining([
        'COPY libs/ libs/',
        'COPY services/ services/',
        'COPY --from=dashboard /build/web/dashboard/dist/ web/dashboard/dist/',
      ]),
    );
  });

  it('gives the runtime user the compile cache directory, which a new compose volume takes its owner from', () => {
    const user = instructions.findLastIndex((l) => l.startsWith('USER '));
    const owned = instructions.findIndex((l) => l.includes('chown 1000:1000 /tmp/node-compile-cache'));
    expect(owned).toBeGreaterThan(0);
    expect(owned).toBeLessThan(user);
    expect(instructions.at(user)).toBe('USER 1000:1000');
  });

  it('runs as a numeric non-root user through the entrypoint script', () => {
    const user = instructions.filter((l) => l.startsWith('USER ')).at(-1);
    expect(user).toMatch(/^USER [1-9]\d*(:\d+)?$/);
    expect(instructions.at(-1)).toBe('ENTRYPOINT ["/bin/sh", "/app/deploy/entrypoint.sh"]');
  });
});

describe('.dockerignore', () => {
  const rules = readRepoFile('.dockerignore')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));

  it('keeps node_modules, git and tests out but the workspace manifests in', () => {
    expect(rules).toEqual(
      expect.arrayContaining(['**/node_modules', '.git', '.runtime', 'tests/**', '!tests/package.json']),
    );
    // The Dockerfile copies these, so they must stay in the build context.
    for (const kept of ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', 'libs', 'services', 'deploy']) {
      expect(rules).not.toContain(kept);
    }
  });
});

describe('deploy/entrypoint.sh', () => {
  // A stand-in `node` that records its pid and arguments, and fails when asked to (FAIL_ON=<arg>).
  const bin = mkdtempSync(join(tmpdir(), 'postline-entrypoint-'));
  writeFileSync(
    join(bin, 'node'),
    '#!/bin/sh\necho "node $$ $*"\nif [ -n "${FAIL_ON:-}" ] && [ "$1" = "$FAIL_ON" ]; then exit 3; fi\n',
  );
  chmodSync(join(bin, 'node'), 0o755);
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  function run(env: Record<string, string>) {
    const r = spawnSync('/bin/sh', [join(repoRoot, 'deploy/entrypoint.sh')], {
      cwd: tmpdir(),
      env: { PATH: `${bin}:/usr/bin:/bin`, ...env },
      encoding: 'utf8',
    });
    const calls = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [, pid, ...args] = l.split(' ');
        return { pid: Number(pid), args };
      });
    return { status: r.status, pid: r.pid, calls, stderr: r.stderr };
  }

  it.each(SERVICES)('execs node on the main.ts of SERVICE=%s from the repository root', (name) => {
    const r = run({ SERVICE: name });
    expect(r.status).toBe(0);
    expect(r.calls).toEqual([{ pid: r.pid, args: [`services/${name}/src/main.ts`] }]);
  });

  it('runs every service migration in turn for SERVICE=migrate', () => {
    const r = run({ SERVICE: 'migrate' });
    expect(r.status).toBe(0);
    expect(r.calls.map((c) => c.args)).toEqual(SERVICES.map((s) => [`services/${s}/src/migrate.ts`]));
  });

  it('stops at the first failing migration with a failure status', () => {
    const r = run({ SERVICE: 'migrate', FAIL_ON: 'services/inbound-smtp/src/migrate.ts' });
    expect(r.status).not.toBe(0);
    expect(r.calls.map((c) => c.args[0])).toEqual([
      'services/api-gateway/src/migrate.ts',
      'services/sender/src/migrate.ts',
      'services/inbound-smtp/src/migrate.ts',
    ]);
  });

  it('refuses an unknown or missing SERVICE, naming the choices', () => {
    for (const env of [{ SERVICE: 'mailer' }, {}] as Record<string, string>[]) {
      const r = run(env);
      expect(r.status).toBe(64);
      expect(r.calls).toEqual([]);
      expect(r.stderr).toContain(
        'api-gateway sender inbound-smtp webhook-dispatcher scheduler domain-verifier migrate',
      );
    }
  });

  it.each(SERVICES)('points at files that exist for %s', (name) => {
    expect(existsSync(join(repoRoot, 'services', name, 'src', 'main.ts'))).toBe(true);
    expect(existsSync(join(repoRoot, 'services', name, 'src', 'migrate.ts'))).toBe(true);
  });
});
