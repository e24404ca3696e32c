import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVICE_NAMES } from '@postline/contracts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Every file whose change changes what the migrations build: the migrations and the code that runs them. */
function migrationSources(): string[] {
  const folders = [
    ...SERVICE_NAMES.map((name) => join(ROOT, 'services', name, 'migrations')),
    join(ROOT, 'libs', 'platform', 'src', 'db'),
  ];
  return folders.flatMap((folder) =>
    readdirSync(folder)
      .filter((file) => file.endsWith('.ts'))
      .sort()
      .map((file) => join(folder, file)),
  );
}

/** The template's name: one per set of migrations, so a changed migration builds a new one. */
function templateName(): string {
  const hash = createHash('sha256');
  for (const file of migrationSources()) hash.update(file.slice(ROOT.length)).update(readFileSync(file));
  return `pltpl_${hash.digest('hex').slice(0, 16)}`;
}

function runMigration(service: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'services', service, 'src', 'migrate.ts')], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`migrate ${service} failed (${code}): ${stderr}`)),
    );
  });
}

/** Runs the six services' migrations on env's DATABASE_URL; each migrates its own schema, so side by side. */
export async function migrateSystem(env: NodeJS.ProcessEnv): Promise<void> {
  await Promise.all(SERVICE_NAMES.map((service) => runMigration(service, env)));
}

function withDatabase(url: string, name: string): string {
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.toString();
}

let made: Promise<string> | undefined;

/**
 * A database holding every service's migrations, built once per set of migrations and kept between runs:
 * a started system's database is `CREATE DATABASE … TEMPLATE` of it, a file copy, instead of six migration
 * processes. Concurrent builders (jest workers, two runs) take an advisory lock; the template is built
 * under another name and renamed when complete, so a half-built one is never copied.
 */
export function systemTemplate(databaseUrl: string, env: NodeJS.ProcessEnv): Promise<string> {
  made ??= buildTemplate(databaseUrl, env).catch((err: unknown) => {
    made = undefined;
    throw err;
  });
  return made;
}

async function buildTemplate(databaseUrl: string, env: NodeJS.ProcessEnv): Promise<string> {
  const name = templateName();
  const client = new pg.Client({ connectionString: withDatabase(databaseUrl, 'postgres') });
  await client.connect();
  try {
    const exists = async () =>
      ((await client.query('select 1 from pg_database where datname = $1', [name])).rowCount ?? 0) > 0;
    if (await exists()) return name;
    await client.query('select pg_advisory_lock(hashtext($1))', [name]);
    try {
      if (await exists()) return name;
      const building = `${name}_building`;
      await client.query(`drop database if exists "${building}" with (force)`);
      await client.query(`create database "${building}"`);
      await migrateSystem({ ...env, DATABASE_URL: withDatabase(databaseUrl, building) });
      await client.query(`alter database "${building}" rename to "${name}"`);
      return name;
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [name]);
    }
  } finally {
    await client.end();
  }
}
