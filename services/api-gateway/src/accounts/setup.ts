import type { Kysely } from 'kysely';
import { randomToken, sha256Hex, type Logger } from '@postline/platform';
import { anyUserExists, insertSetupToken } from '../db/accounts.ts';
import type { GatewayDb } from '../db/schema.ts';

/** How long a setup link printed at start stays usable. */
export const SETUP_LINK_TTL_MS = 24 * 60 * 60_000;

/**
 * While no user exists, issues a one-time setup link (only its token's hash is stored) and logs it, so that the
 * operator who started the gateway, and no one else, creates the first account and team. Returns the link, or
 * undefined when a user exists already.
 */
export async function announceSetup(deps: {
  db: Kysely<GatewayDb>;
  logger: Logger;
  publicBaseUrl: string;
  now: () => Date;
}): Promise<string | undefined> {
  if (await anyUserExists(deps.db)) return undefined;
  const token = randomToken(32);
  await insertSetupToken(deps.db, sha256Hex(token), new Date(deps.now().getTime() + SETUP_LINK_TTL_MS));
  // The dashboard's setup page, which calls GET and POST /dashboard-api/setup with the token.
  const url = new URL('/dashboard/setup', deps.publicBaseUrl);
  url.searchParams.set('token', token);
  const link = url.toString();
  deps.logger.warn(
    { setup_url: link },
    `No user yet. Create the first account within 24 hours with this one-time link: ${link}`,
  );
  return link;
}
