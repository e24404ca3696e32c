// The six services and how a local run starts them: shared by `npm start` and `npm run migrate`.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NAMES, type ServiceName } from '@postline/contracts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export const SERVICES = SERVICE_NAMES;

export function entry(service: ServiceName, file: 'main' | 'migrate'): string {
  return join(ROOT, 'services', service, 'src', `${file}.ts`);
}

/**
 * POSTLINE_SECRET_KEY for local runs: generated once and kept in a git-ignored file, so secrets sealed by
 * one run open in the next. Production sets the variable itself.
 */
export function localSecretKey(): string {
  const file = join(ROOT, '.local', 'secret-key');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

/** The gateway's port when API_PORT is unset (its config's default). */
const DEFAULT_API_PORT = '3000';

/**
 * The environment `npm start` gives the services: the caller's, with the addresses of this host's own
 * services following the ports that were set. One environment serves all six, so the gateway's API_PORT
 * is the one HTTP port a local run sets: the relay asks the gateway at API_GATEWAY_URL, and links and pages
 * point at PUBLIC_BASE_URL, so both follow API_PORT unless they are set themselves.
 */
export function localEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const apiPort = env.API_PORT || DEFAULT_API_PORT;
  return {
    ...env,
    API_GATEWAY_URL: env.API_GATEWAY_URL || `http://127.0.0.1:${apiPort}`,
    PUBLIC_BASE_URL: env.PUBLIC_BASE_URL || `http://localhost:${apiPort}`,
  };
}
