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
