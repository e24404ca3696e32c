// The six services and how a local run starts them: shared by `npm start`, `npm run migrate` and the
// end-to-end launcher.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export const SERVICES = ['api-gateway', 'sender', 'inbound-smtp', 'webhook-dispatcher', 'scheduler', 'domain-verifier'] as const;
export type ServiceName = (typeof SERVICES)[number];

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
